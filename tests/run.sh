#!/usr/bin/env bash
# The test command of README.md: installs what the tests need, then runs them all.
#   bash tests/run.sh [pytest args...]       (e.g. -k frontier -x, or -n 0 for one process)
# Installs, only when missing: Debian's redis-server and postgresql (the tests start
# their own servers on 127.0.0.1, on free ports, in temporary folders), chromium (a
# headless browser for the live page's test) and python3-venv;
# then requirements.txt into a virtual environment, .venv (or $VENV), made if need be.
# Services already running are left alone.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
need_apt=()
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need_apt+=(postgresql)
"$PYTHON" -c "import ensurepip, venv" >/dev/null 2>&1 || need_apt+=(python3-venv)
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)  # the live page's test (testbed/browser.py)
if [ ${#need_apt[@]} -gt 0 ]; then
    if [ "$(id -u)" -eq 0 ]; then
        SUDO=
    elif command -v sudo >/dev/null 2>&1; then
        SUDO=sudo
    else
        echo "tests/run.sh: install ${need_apt[*]} (Debian's packages) first" >&2
        exit 1
    fi
    echo "installing ${need_apt[*]} from Debian's packages" >&2
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
    # a package just installed may have started its service: the tests start their own
    for service in redis-server postgresql; do
        case " ${need_apt[*]} " in
            *" $service "*) $SUDO service "$service" stop >/dev/null 2>&1 || true ;;
        esac
    done
fi

VENV=${VENV:-.venv}
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r requirements.txt
# three test processes on two cores: most tests wait on crawls, servers and timers
exec "$VENV/bin/python" -m pytest -n 3 --dist worksteal tests "$@"
