"""Throw-away MariaDB servers for tests, the demo and the benchmark.

Each server lives in its own folder `<base_dir>/<name>/` (datadir, pid file,
error log, the port it was last started on) and is started with
`--no-defaults`, so nothing from the machine's own MariaDB configuration (or
its default server) is read or touched.  `start()` is idempotent: a folder that
already holds an initialised datadir is reused, and a server that is still
running from an earlier process is attached to rather than started twice.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pymysql

from cdcflow.core.errors import CdcflowError

ROOT_USER = "root"
ROOT_PASSWORD = "cdcflow"
HOST = "127.0.0.1"

MARIADBD = "mariadbd"
INSTALL_DB = "mariadb-install-db"

# Written once the datadir is installed and root's password is set; a datadir
# without it is a half-finished first start and is installed again.
_MARKER = "cdcflow-initialised"
_PORT_FILE = "port"

# Sized for a 2-core test box running two servers side by side: small redo
# flushing cost, no doublewrite (a killed process cannot tear a page in the
# page cache; only an OS crash could), big packets for batched multi-row writes.
SERVER_ARGS = (
    "--skip-name-resolve",
    "--innodb-buffer-pool-size=256M",
    "--innodb-log-file-size=256M",
    "--innodb-flush-log-at-trx-commit=2",
    "--innodb-doublewrite=0",
    "--sync-binlog=0",
    "--max-connections=200",
    "--max-allowed-packet=256M",
    "--character-set-server=utf8mb4",
    "--collation-server=utf8mb4_general_ci",
)

# The upstream's binlog must carry full row images with column names and
# types, which is what the binlog source reads.
BINLOG_ARGS = (
    "--binlog-format=ROW",
    "--binlog-row-image=FULL",
    "--binlog-row-metadata=FULL",
    "--log-slave-updates",
    "--gtid-strict-mode",
)

# Options that shape the files on disk must be the same at install time, or
# the first start resizes the redo log.
_INSTALL_ARGS = ("--innodb-log-file-size=256M", "--innodb-buffer-pool-size=256M")

SETTLED_HISTORY = 100  # undo logs the purge may leave: a few are always there on a live server
SETTLED_DIRTY = 10  # pages an idle server dirties by itself (its statistics) while it is waited on
_SOCKET_PATH_MAX = 100  # sun_path is 108 bytes on Linux; keep a margin


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def port_free(port: int) -> bool:
    """Whether a server could listen on `port` of 127.0.0.1 now, binding it as mariadbd does
    (SO_REUSEADDR: a port whose last connections are closing counts as free)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((HOST, port))
        except OSError:
            return False
    return True


def _pid_alive(pid: int) -> bool:
    """True while the process exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            # state is the field after the parenthesised command name
            state = f.read().rsplit(b")", 1)[1].split()[0]
        return state != b"Z"
    except (OSError, IndexError):
        return True


def _cmdline(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return []


class MariaDB:
    """One mariadbd process with its own datadir under `<base_dir>/<name>/`."""

    def __init__(
        self,
        base_dir: str | Path,
        *,
        name: str,
        port: int | None = None,
        binlog: bool = False,
        server_id: int = 1,
        extra_args: list[str] | tuple[str, ...] = (),
    ):
        self.name = name
        self.dir = Path(base_dir).resolve() / name
        self.datadir = self.dir / "data"
        # its temp folder, the install's too: servers sharing /tmp collided on temp-table files
        self.tmpdir = self.dir / "tmp"
        self.pid_file = self.dir / "mariadbd.pid"
        self.log_file = self.dir / "error.log"
        self.socket = self._socket_path()
        self.port = port
        self.binlog = binlog
        self.server_id = server_id
        self.extra_args = list(extra_args)
        self._proc: subprocess.Popen | None = None

    def __repr__(self) -> str:
        return f"MariaDB(name={self.name!r}, port={self.port}, binlog={self.binlog}, dir={str(self.dir)!r})"

    def __enter__(self) -> "MariaDB":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # ---- lifecycle -------------------------------------------------------

    def start(self, timeout: float = 60) -> "MariaDB":
        """Start the server (installing the datadir the first time), or attach
        to the one already running from this folder; return when it accepts
        TCP connections as root."""
        self.dir.mkdir(parents=True, exist_ok=True)
        recorded = self._recorded_port()
        pid = self.pid
        if pid is not None:
            if self.port is None:
                self.port = recorded
            if recorded is not None and recorded != self.port:
                raise CdcflowError(
                    f"MariaDB server {self.name!r} in {self.dir} is already running on port {recorded}, "
                    f"not on the requested port {self.port}",
                    hint="stop it first, or start it without a port to attach to it",
                )
            self._wait_ready(ROOT_PASSWORD, timeout, pid)
            return self

        self._remove_stale_files()
        if self.port is None:
            # the port it had last, unless another process took it while this server was down
            self.port = recorded if recorded is not None and port_free(recorded) else free_port()
        fresh = not (self.dir / _MARKER).exists()
        if fresh:
            self._install()
        self._spawn()
        self._write_port()
        try:
            # A fresh install's root has no password until _secure() sets it.
            self._wait_ready("" if fresh else ROOT_PASSWORD, timeout, self._proc.pid)
            if fresh:
                self._secure()
                (self.dir / _MARKER).write_text("ok\n")
        except BaseException:
            self.kill()
            raise
        return self

    def stop(self, timeout: float = 30) -> None:
        """Clean shutdown (SIGTERM, which mariadbd handles like `mariadb-admin
        shutdown`), SIGKILL if it has not exited within `timeout`."""
        pid = self._live_pid()
        if pid is not None:
            self._signal(pid, signal.SIGTERM)
            if not self._wait_exit(pid, timeout):
                self._signal(pid, signal.SIGKILL)
                self._wait_exit(pid, 10)
        self._reap()
        self._remove_stale_files()

    def kill(self) -> None:
        """SIGKILL, no shutdown: InnoDB must recover on the next start."""
        pid = self._live_pid()
        if pid is not None:
            self._signal(pid, signal.SIGKILL)
            self._wait_exit(pid, 10)
        self._reap()

    @property
    def pid(self) -> int | None:
        """The running server's pid, from the pid file, if that process is
        alive and really is this folder's mariadbd (pids get reused)."""
        try:
            pid = int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            return None
        if not _pid_alive(pid):
            return None
        if f"--datadir={self.datadir}" not in _cmdline(pid):
            return None
        return pid

    def _live_pid(self) -> int | None:
        pid = self.pid
        if pid is None and self._proc is not None and self._proc.poll() is None:
            pid = self._proc.pid  # still starting: no pid file yet
        return pid

    @property
    def running(self) -> bool:
        return self.pid is not None

    # ---- client side -----------------------------------------------------

    @property
    def uri(self) -> str:
        return f"mysql://{ROOT_USER}:{ROOT_PASSWORD}@{HOST}:{self.port}/"

    def connect(self, database: str | None = None, **kw) -> pymysql.connections.Connection:
        """A pymysql connection over TCP as root, autocommit, utf8mb4."""
        if self.port is None:
            raise CdcflowError(f"MariaDB server {self.name!r} has no port yet", hint="call start() first")
        params = dict(
            host=HOST,
            port=self.port,
            user=ROOT_USER,
            password=ROOT_PASSWORD,
            database=database,
            autocommit=True,
            charset="utf8mb4",
            connect_timeout=10,
        )
        params.update(kw)
        return pymysql.connect(**params)

    def execute(self, *sql: str, database: str | None = None) -> None:
        """Run statements one after another on one connection."""
        conn = self.connect(database)
        try:
            with conn.cursor() as cur:
                for stmt in sql:
                    cur.execute(stmt)
        finally:
            conn.close()

    def query(self, sql: str, args=None, database: str | None = None) -> list[tuple]:
        conn = self.connect(database)
        try:
            with conn.cursor() as cur:
                cur.execute(sql, args)
                return [tuple(r) for r in cur.fetchall()]
        finally:
            conn.close()

    def settle(self, timeout: float = 120) -> tuple[int, int, float]:
        """Wait until InnoDB's background work of earlier writes is done: its dirty pages flushed
        (the page cleaner made to flush them all for the while) and the purge's history list
        drained.  A timed run on a server reused from an earlier one otherwise shares its cores
        with that work (the page cleaner and the purge threads run in mariadbd).  Returns the
        dirty pages and the history length found, and the seconds waited."""
        def now() -> tuple[int, int]:
            dirty = int(self.query("SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_dirty'")[0][1])
            history = self.query("SELECT `COUNT` FROM information_schema.INNODB_METRICS "
                                 "WHERE NAME = 'trx_rseg_history_len'")
            return dirty, int(history[0][0]) if history else 0

        t0, found = time.monotonic(), now()
        pct = self.query("SELECT @@GLOBAL.innodb_max_dirty_pages_pct")[0][0]
        self.execute("SET GLOBAL innodb_max_dirty_pages_pct = 0")
        try:
            dirty, history = found
            while (dirty > SETTLED_DIRTY or history > SETTLED_HISTORY) and time.monotonic() - t0 < timeout:
                time.sleep(0.1)
                dirty, history = now()
        finally:
            self.execute(f"SET GLOBAL innodb_max_dirty_pages_pct = {pct}")
        return found[0], found[1], round(time.monotonic() - t0, 2)

    def new_binlog(self, timeout: float = 60) -> tuple[str, int]:
        """FLUSH BINARY LOGS, as a restart does, and the head once the new binlog holds its header
        alone: MariaDB writes its last event, the Binlog_checkpoint naming the new binlog, once
        the old one's transactions are durable, from a background thread (about 0.6 s later here),
        a move of the head a reader would otherwise see after the flush."""
        self.execute("FLUSH BINARY LOGS")
        file = self.binlog_head()[0]
        deadline = time.monotonic() + timeout
        while not any(kind == "Binlog_checkpoint" and file in info
                      for _f, _pos, kind, _server, _end, info in self.query(f"SHOW BINLOG EVENTS IN '{file}'")):
            if time.monotonic() > deadline:
                raise AssertionError(f"no Binlog_checkpoint naming {file} within {timeout} s")
            time.sleep(0.05)
        return self.binlog_head()

    def binlog_head(self) -> tuple[str, int]:
        """(file, position) of the end of the binlog."""
        # MariaDB >= 10.5.2 / MySQL >= 8.2 renamed the statement; older ones
        # only know SHOW MASTER STATUS.
        for stmt in ("SHOW BINLOG STATUS", "SHOW BINARY LOG STATUS", "SHOW MASTER STATUS"):
            try:
                rows = self.query(stmt)
            except pymysql.err.ProgrammingError:
                continue
            if not rows:
                raise CdcflowError(
                    f"MariaDB server {self.name!r} on port {self.port} writes no binlog",
                    hint="start it with binlog=True",
                )
            return rows[0][0], int(rows[0][1])
        raise CdcflowError(f"MariaDB server {self.name!r} understands no binlog status statement")

    # ---- internals -------------------------------------------------------

    def _socket_path(self) -> Path:
        path = self.dir / "mariadbd.sock"
        if len(str(path)) <= _SOCKET_PATH_MAX:
            return path
        digest = hashlib.sha1(str(self.dir).encode()).hexdigest()[:12]
        return Path(tempfile.gettempdir()) / f"cdcflow-mariadb-{digest}.sock"

    def _recorded_port(self) -> int | None:
        try:
            return int((self.dir / _PORT_FILE).read_text().strip())
        except (OSError, ValueError):
            return None

    def _write_port(self) -> None:
        (self.dir / _PORT_FILE).write_text(f"{self.port}\n")

    def _user_args(self) -> list[str]:
        # --user only means something (and is only accepted quietly) for root
        return ["--user=root"] if os.geteuid() == 0 else []

    def _install(self) -> None:
        if self.datadir.exists():
            shutil.rmtree(self.datadir)
        self.datadir.mkdir(parents=True)
        self.tmpdir.mkdir(exist_ok=True)
        cmd = [
            INSTALL_DB,
            "--no-defaults",
            *self._user_args(),
            f"--datadir={self.datadir}",
            # the bootstrap server's temp tables too: two installs at once in /tmp failed on each other's
            f"--tmpdir={self.tmpdir}",
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
            "--skip-name-resolve",
            *_INSTALL_ARGS,
        ]
        try:
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        except FileNotFoundError as e:
            raise CdcflowError(
                f"{INSTALL_DB} is not installed", hint="install the mariadb-server package"
            ) from e
        if res.returncode != 0:
            tail = "\n".join((res.stdout + res.stderr).splitlines()[-20:])
            raise CdcflowError(f"{INSTALL_DB} failed for {self.datadir} (exit {res.returncode}):\n{tail}")

    def command(self) -> list[str]:
        """The mariadbd command line this server runs with."""
        cmd = [
            MARIADBD,
            "--no-defaults",
            *self._user_args(),
            f"--datadir={self.datadir}",
            f"--socket={self.socket}",
            f"--tmpdir={self.tmpdir}",
            f"--port={self.port}",
            f"--bind-address={HOST}",
            f"--pid-file={self.pid_file}",
            f"--log-error={self.log_file}",
            f"--server-id={self.server_id}",
            *SERVER_ARGS,
        ]
        if self.binlog:
            cmd += [f"--log-bin={self.datadir / 'binlog'}", *BINLOG_ARGS]
        return cmd + self.extra_args

    def _spawn(self) -> None:
        self.tmpdir.mkdir(exist_ok=True)
        try:
            # Own session: a Ctrl-C in the terminal that runs the tests or the
            # demo must not kill the server behind the fixture's back.
            with open(self.dir / "mariadbd.stderr", "ab") as stderr:
                self._proc = subprocess.Popen(
                    self.command(),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=stderr,
                    start_new_session=True,
                )
        except FileNotFoundError as e:
            raise CdcflowError(f"{MARIADBD} is not installed", hint="install the mariadb-server package") from e

    def _wait_ready(self, password: str, timeout: float, pid: int) -> None:
        deadline = time.monotonic() + timeout
        last: Exception | None = None
        while True:
            exited = (self._proc is not None and self._proc.pid == pid and self._proc.poll() is not None) or not _pid_alive(pid)
            if exited:
                raise self._failure(f"exited during startup (pid {pid})")
            try:
                # read_timeout too: something that accepts the TCP connection
                # but never sends a greeting must not hang the poll.
                conn = pymysql.connect(
                    host=HOST, port=self.port, user=ROOT_USER, password=password,
                    connect_timeout=2, read_timeout=2, write_timeout=2,
                )
            except pymysql.err.OperationalError as e:
                if e.args and e.args[0] == 1045:
                    # Something answers on the port but does not know our
                    # password: another server owns it.
                    raise self._failure(f"refused root's password on port {self.port}") from e
                last = e
            else:
                self._check_own(conn)
                return
            if time.monotonic() > deadline:
                raise self._failure(f"did not accept connections on port {self.port} within {timeout:g}s ({last})")
            time.sleep(0.1)

    def _check_own(self, conn) -> None:
        """Refuse a server on this one's port that is not this folder's: every server these tools
        start has root's password, so another one that took the port answers as this one would
        (a bench's downstream restarted on its recorded port, taken meanwhile, was written to
        as if it were its own).  Closes `conn`."""
        try:
            with conn.cursor() as cur:
                cur.execute("SELECT @@datadir")
                (datadir,) = cur.fetchone()
        finally:
            conn.close()
        if Path(datadir).resolve() != self.datadir.resolve():
            raise self._failure(f"found port {self.port} answered by another server (its datadir {datadir})")

    def _secure(self) -> None:
        """Give root a password on every local host entry, all privileges
        (ALL includes REPLICATION SLAVE / BINLOG MONITOR, which the binlog
        reader needs)."""
        conn = pymysql.connect(
            host=HOST, port=self.port, user=ROOT_USER, password="", autocommit=True, connect_timeout=10, read_timeout=30
        )
        try:
            with conn.cursor() as cur:
                for host in ("localhost", "127.0.0.1", "::1"):
                    cur.execute(f"CREATE USER IF NOT EXISTS 'root'@'{host}'")
                    cur.execute(f"ALTER USER 'root'@'{host}' IDENTIFIED BY %s", (ROOT_PASSWORD,))
                    cur.execute(f"GRANT ALL PRIVILEGES ON *.* TO 'root'@'{host}' WITH GRANT OPTION")
                # install-db also adds root@<hostname>, which --skip-name-resolve
                # can never match; dropping it keeps the error log quiet.
                hostname = socket.gethostname()
                if hostname not in ("localhost", "127.0.0.1", "::1"):
                    cur.execute("DROP USER IF EXISTS 'root'@%s", (hostname,))
                cur.execute("FLUSH PRIVILEGES")
        finally:
            conn.close()

    def _failure(self, what: str) -> CdcflowError:
        return CdcflowError(
            f"MariaDB server {self.name!r} {what}; last lines of {self.log_file}:\n{self.log_tail()}",
            hint="see the error log; a port already in use needs another port",
        )

    def log_tail(self, lines: int = 20) -> str:
        try:
            text = self.log_file.read_text(errors="replace")
        except OSError:
            return "(no error log)"
        return "\n".join(text.splitlines()[-lines:])

    def _signal(self, pid: int, sig: int) -> None:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass

    def _wait_exit(self, pid: int, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc is not None and self._proc.pid == pid:
                if self._proc.poll() is not None:
                    return True
            elif not _pid_alive(pid):
                return True
            time.sleep(0.05)
        return False

    def _reap(self) -> None:
        if self._proc is not None:
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            else:
                self._proc = None

    def _remove_stale_files(self) -> None:
        # A killed server leaves its pid file and socket behind.
        for path in (self.pid_file, self.socket):
            try:
                path.unlink()
            except FileNotFoundError:
                pass


PAIR = ("upstream", "downstream")  # the pair's folders under its base


def pair_running(base_dir: str | Path) -> bool:
    """Whether both servers of a pair under `base_dir` are running already (start_pair then
    attaches to them)."""
    return all(MariaDB(base_dir, name=name).running for name in PAIR)


def start_pair(
    base_dir: str | Path, *, upstream_port: int | None = None, downstream_port: int | None = None
) -> tuple[MariaDB, MariaDB]:
    """An upstream with a ROW binlog and a downstream without one, started (or attached to)."""
    up = MariaDB(base_dir, name=PAIR[0], port=upstream_port, binlog=True, server_id=1)
    down = MariaDB(base_dir, name=PAIR[1], port=downstream_port, binlog=False, server_id=2)
    up.start()
    try:
        down.start()
    except BaseException:
        up.stop()
        raise
    return up, down
