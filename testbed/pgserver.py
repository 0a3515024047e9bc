"""A real PostgreSQL (Debian's package) on 127.0.0.1, a free port, a temporary folder.

``initdb`` and the server refuse to run as root, and CI runs the tests as root: then
every server command runs as the ``postgres`` user (``runuser -u postgres --``, or
``su postgres -c``) in a temporary folder that user owns. Clients log in over TCP
with a password (scram-sha-256), as a crawl would.
"""

from __future__ import annotations

import atexit
import glob
import os
import pwd
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import psycopg2

SERVICE_USER = "postgres"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def find_bindir() -> Path:
    """Debian's /usr/lib/postgresql/<version>/bin (the newest), else initdb on PATH."""
    candidates = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0,
    )
    if candidates:
        return Path(candidates[-1]).parent
    initdb = shutil.which("initdb")
    if initdb:
        return Path(initdb).parent
    raise RuntimeError("PostgreSQL not found: install Debian's postgresql (tests/run.sh does)")


class PgServer:
    """``start()``, ``stop()``, ``restart()``, ``create_database()``; ``url(db)`` for clients.

    Durability is relaxed (``fsync=off``) for speed unless ``durable`` (benchmarks); a
    fast shutdown (``-m fast``, what ``restart`` does) still writes every committed
    transaction to disk.
    """

    def __init__(self, user: str = "spitag", password: str = "pg-secret-pw", durable: bool = False) -> None:
        self.bindir = find_bindir()
        self.user = user
        self.password = password
        self.durable = durable
        self.as_service_user = os.geteuid() == 0
        if self.as_service_user:
            try:
                pwd.getpwnam(SERVICE_USER)
            except KeyError:
                raise RuntimeError(
                    f"running as root, PostgreSQL must run as user {SERVICE_USER!r}, which does not"
                    " exist: install Debian's postgresql (tests/run.sh does)"
                ) from None
        # Not under pytest's tmp_path: that folder is private to root, postgres can't enter it.
        parent = tempfile.gettempdir()
        if self.as_service_user and not os.stat(parent).st_mode & 0o001:
            parent = "/tmp"
        self.dir = Path(tempfile.mkdtemp(prefix="spitag-pg-", dir=parent))
        self.data = self.dir / "data"
        self.logfile = self.dir / "postgres.log"
        self.port = free_port()
        self.initialized = False
        if self.as_service_user:
            shutil.chown(self.dir, SERVICE_USER, SERVICE_USER)
        atexit.register(self.cleanup)  # a crashed test run must not leave a server behind

    # -- addresses -----------------------------------------------------------------
    def url(self, database: str = "postgres", password: str | None = None) -> str:
        secret = self.password if password is None else password
        return f"postgresql://{self.user}:{secret}@127.0.0.1:{self.port}/{database}"

    def connect(self, database: str = "postgres"):
        conn = psycopg2.connect(self.url(database), connect_timeout=10)
        conn.autocommit = True
        return conn

    # -- life cycle ----------------------------------------------------------------
    def _run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        cmd = [str(a) for a in args]
        if self.as_service_user:
            if shutil.which("runuser"):
                cmd = ["runuser", "-u", SERVICE_USER, "--", *cmd]
            else:
                cmd = ["su", SERVICE_USER, "-s", "/bin/sh", "-c", shlex.join(cmd)]
        done = subprocess.run(cmd, cwd=self.dir, capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            raise RuntimeError(
                f"{' '.join(args[:2])} failed ({done.returncode}): {done.stderr.strip()[-2000:]}"
                f"\n{self.log_tail()}"
            )
        return done

    def _init(self) -> None:
        pwfile = self.dir / "pwfile"
        pwfile.write_text(self.password + "\n")
        pwfile.chmod(0o600)
        if self.as_service_user:
            shutil.chown(pwfile, SERVICE_USER, SERVICE_USER)
        self._run(
            self.bindir / "initdb", "-D", self.data, "-U", self.user, f"--pwfile={pwfile}",
            "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C",
            "--no-sync",
        )
        pwfile.unlink()
        self.initialized = True

    def _options(self) -> str:
        options = [
            "-c listen_addresses=127.0.0.1", f"-c port={self.port}",
            f"-c unix_socket_directories={self.dir}", "-c max_connections=60",
        ]
        if not self.durable:
            options += ["-c fsync=off", "-c full_page_writes=off"]
        return " ".join(options)

    def start(self) -> PgServer:
        if not self.initialized:
            self._init()
        self._run(
            self.bindir / "pg_ctl", "-D", self.data, "-l", self.logfile, "-o", self._options(),
            "-w", "-t", "60", "start",
        )
        deadline = time.monotonic() + 30
        while True:  # pg_ctl -w waits for the socket; make sure TCP logins work too
            try:
                self.connect().close()
                return self
            except psycopg2.OperationalError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"PostgreSQL did not accept logins\n{self.log_tail()}") from None
                time.sleep(0.05)

    def stop(self) -> None:
        """Fast shutdown (clients disconnected, committed data kept); kill if it hangs."""
        if not (self.data / "postmaster.pid").exists():
            return
        try:
            self._run(self.bindir / "pg_ctl", "-D", self.data, "-m", "fast", "-w", "-t", "60", "stop")
        except (RuntimeError, subprocess.TimeoutExpired):
            self._kill()

    def restart(self, down_seconds: float = 0.0) -> None:
        """``pg_ctl restart -m fast``, or stop, wait ``down_seconds``, start."""
        if down_seconds <= 0:
            self._run(
                self.bindir / "pg_ctl", "-D", self.data, "-l", self.logfile, "-o", self._options(),
                "-m", "fast", "-w", "-t", "60", "restart",
            )
            return
        self.stop()
        time.sleep(down_seconds)
        self.start()

    def _kill(self) -> None:
        pidfile = self.data / "postmaster.pid"
        try:
            pid = int(pidfile.read_text().split()[0])
            os.kill(pid, signal.SIGKILL)
        except (OSError, ValueError, IndexError):
            pass

    def cleanup(self) -> None:
        if self.dir.exists():
            self.stop()
            shutil.rmtree(self.dir, ignore_errors=True)

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.logfile.read_text(errors="replace")[-chars:]
        except OSError:
            return "(no server log)"

    # -- databases -----------------------------------------------------------------
    def create_database(self, name: str | None = None) -> str:
        """A new empty database; returns its URL (with the password)."""
        name = name or f"t_{uuid.uuid4().hex[:12]}"
        conn = self.connect()
        try:
            conn.cursor().execute(f'CREATE DATABASE "{name}" TEMPLATE template0 ENCODING \'UTF8\'')
        finally:
            conn.close()
        return self.url(name)

    def drop_database(self, name: str) -> None:
        conn = self.connect()
        try:
            conn.cursor().execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            conn.close()

    def __enter__(self) -> PgServer:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.cleanup()
