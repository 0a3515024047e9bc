#!/usr/bin/env bash
# The test command of README.md: installs what the tests need, then runs them all.
#   bash tests/run.sh [pytest args...]
# Installs (only when missing): Debian's redis-server and postgresql (the tests start
# their own servers on 127.0.0.1, temporary ports and folders), and requirements.txt.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need_apt+=(postgresql)
if [ ${#need_apt[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then SUDO=sudo; else SUDO=; fi
    echo "installing ${need_apt[*]} from Debian's packages" >&2
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi
# Packaged servers must not keep running on their default ports: the tests start their own.
if command -v service >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ]; then
    service redis-server stop >/dev/null 2>&1 || true
    service postgresql stop >/dev/null 2>&1 || true
fi

PYTHON=${PYTHON:-python3}
"$PYTHON" -m pip install --quiet --disable-pip-version-check -r requirements.txt
exec "$PYTHON" -m pytest tests "$@"
