"""A real Neo4j Community server on loopback, from the official jars, no Docker.

``LocalServer(data_dir).start()`` finds a Java for the release (:mod:`.java_runtime`), resolves
the jars once (:mod:`.neo4j_jars`), writes a ``neo4j.conf`` (loopback only, Bolt plus HTTP for
Neo4j Browser, small memory, usage report and Browser telemetry off), starts
Neo4j's community entry point in its own process group, waits until Bolt and HTTP
answer (:mod:`.loopback`), sets the password on first start (generated, or the one given) and records
``server.json`` (pid, ports, password; mode 0600, written atomically) in the data dir (mode
0700; Neo4j runs with umask 077, so its store files and logs are 0600). ``stop()`` sends SIGTERM,
waits for the clean shutdown, then kills. ``disposable_server()`` gives tests a fresh one.
The releases it runs are in :mod:`.neo4j_release`.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import ServerError
from .java_runtime import find_java
from .loopback import bolt_answers, browser_url, free_port, port_is_free, wait_http
from .neo4j_jars import install
from .neo4j_release import MAIN_CLASSES, NEO4J_VERSION, release
from .settings import Neo4jSettings
from .validation import check_int

__all__ = [
    "DEFAULT_HTTP_PORT",
    "DEFAULT_PORT",
    "LocalServer",
    "ServerInfo",
    "default_data_dir",
    "disposable_server",
]

DEFAULT_PORT = 7687
DEFAULT_HTTP_PORT = 7474
#: The neo4j.conf setting behind ``vector_merge_factor`` (Neo4j 5's own default is 50)
VECTOR_MERGE_SETTING = "internal.dbms.index.vector.standard_merge_factor"
#: Neo4j refuses shorter passwords (dbms.security.auth_minimum_password_length)
MIN_PASSWORD_LENGTH = 8
_STATE_FILE = "server.json"


def default_data_dir() -> Path:
    env = os.environ.get("KGRAG_DATA_DIR")
    return Path(env) if env else Path.home() / ".local" / "share" / "kgrag-neo4j" / "server"


@dataclass
class ServerInfo:
    running: bool
    uri: str | None
    version: str
    pid: int | None
    data_dir: str
    listen: str = "127.0.0.1 (loopback only)"
    user: str = "neo4j"
    # Why repr=False: a ServerInfo printed in a log, a traceback or a REPL must not show it
    password: str | None = field(default=None, repr=False)
    #: Neo4j Browser on the server's HTTP port (None when not running)
    browser_url: str | None = None

    def public_dict(self) -> dict:
        """The ``status --json`` form: never the password."""
        return {
            "running": self.running,
            "uri": self.uri,
            "browser_url": self.browser_url,
            "version": self.version,
            "pid": self.pid,
            "data_dir": self.data_dir,
            "listen": self.listen,
        }

    def credentials(self) -> dict:
        """What the Browser login form asks for (``kgrag server credentials``)."""
        if not self.running:
            raise ServerError("the local server is not running (`kgrag server start`)")
        return {"uri": self.uri, "user": self.user, "password": self.password, "browser_url": self.browser_url}

    def settings(self, database: str | None = None) -> Neo4jSettings:
        if not self.uri:
            raise ServerError("the local server is not running (`kgrag server start`)")
        return Neo4jSettings(uri=self.uri, user=self.user, password=self.password, database=database)


class LocalServer:
    """One local Neo4j bound to one data dir."""

    def __init__(
        self,
        data_dir: str | os.PathLike | None = None,
        *,
        port: int | None = None,
        http_port: int | None = None,
        heap: str | None = None,
        pagecache: str | None = None,
        version: str | None = None,
        vector_merge_factor: int | None = None,
    ):
        """``version``: the Neo4j to run (default: the one the data dir holds, else
        ``NEO4J_VERSION``); a data dir keeps the version it was made with."""
        self.data_dir = Path(data_dir) if data_dir else default_data_dir()
        for what, value in (("port", port), ("http_port", http_port)):
            if value is not None:
                check_int(value, what, minimum=1, maximum=65535, error=ServerError)
        self.port = port
        self.http_port = http_port
        self.heap = heap or os.environ.get("KGRAG_NEO4J_HEAP", "1g")
        self.pagecache = pagecache or os.environ.get("KGRAG_NEO4J_PAGECACHE", "256m")
        if version is not None:
            release(version)  # refused here, before anything is written
        self.requested_version = version
        merge: Any = vector_merge_factor
        env = os.environ.get("KGRAG_NEO4J_VECTOR_MERGE_FACTOR", "").strip()
        if merge is None and env:
            try:
                merge = int(env)
            except ValueError:
                raise ServerError(f"KGRAG_NEO4J_VECTOR_MERGE_FACTOR must be a whole number, got {env!r}") from None
        self.vector_merge_factor = (
            None if merge is None else check_int(merge, "the vector merge factor", minimum=2, maximum=1000, error=ServerError)
        )

    # -- state --------------------------------------------------------------------------
    @property
    def state_path(self) -> Path:
        return self.data_dir / _STATE_FILE

    @property
    def log_path(self) -> Path:
        return self.data_dir / "logs" / "console.log"

    @property
    def version(self) -> str:
        """The version asked for, else the one the data dir records, else the default."""
        return self.requested_version or self._read_state().get("version") or NEO4J_VERSION

    def check_version(self) -> None:
        """Refuse to run another version on a data dir that holds a database: 2025.x upgrades a
        5.26 store in place and 5.26 cannot open it again, so a stray flag would be one-way."""
        recorded = self._read_state().get("version")
        if not recorded or not self.requested_version or recorded == self.requested_version:
            return
        if not (self.data_dir / "data" / "databases").is_dir():
            return  # no database yet: nothing to convert
        raise ServerError(
            f"{self.data_dir} holds a Neo4j {recorded} database; start it with --neo4j-version {recorded} "
            f"(or none), or give another --data-dir for Neo4j {self.requested_version} "
            '(moving the data: docs/operations.md, "Upgrading from 5.26 to 2025.x")'
        )

    def _read_state(self) -> dict:
        try:
            return json.loads(self.state_path.read_text())
        except (OSError, ValueError):
            return {}

    def _write_state(self, state: dict) -> None:
        """Write server.json atomically, readable by its owner only: a fresh temporary file is
        created with mode 0600 before any byte is written (a stale one left by a crash, perhaps
        of another mode, is never reused), then renamed over the old state."""
        self._private_dir()
        fd, tmp = tempfile.mkstemp(prefix=".server-", suffix=".tmp", dir=self.data_dir)
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w") as f:
                json.dump(state, f, indent=2)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.state_path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def _private_dir(self) -> None:
        """The data dir, made if needed, closed to other users (0700): it holds every tenant's
        text in the store files and transaction logs, and the password in server.json."""
        self.data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self.data_dir, 0o700)

    def _pid_alive(self, pid: int | None) -> bool:
        if not pid:
            return False
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        try:  # guard against a recycled pid
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            return True
        if "<defunct>" in cmdline or not cmdline:
            return False
        return any(c in cmdline for c in MAIN_CLASSES) and str(self.data_dir.resolve()) in cmdline

    def status(self) -> ServerInfo:
        state = self._read_state()
        pid = state.get("pid")
        running = self._pid_alive(pid) and bolt_answers(state.get("port", 0))
        http_port = state.get("http_port")
        return ServerInfo(
            running=running,
            uri=state.get("uri") if running else None,
            version=state.get("version", self.version),
            pid=pid if running else None,
            data_dir=str(self.data_dir),
            password=state.get("password"),
            browser_url=browser_url(http_port) if running and http_port else None,
        )

    def recorded_password(self) -> str | None:
        """The password ``server.json`` holds, running or not (None before the first start)."""
        state = self._read_state()
        return state.get("password") if state.get("password_set") else None

    # -- start / stop -------------------------------------------------------------------
    def _write_conf(self, port: int, http_port: int) -> Path:
        self._private_dir()
        d = self.data_dir.resolve()
        _owner_only(d)  # files an earlier version (or another umask) left readable to others
        conf_dir = d / "conf"
        conf_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        for sub in ("data", "logs", "run", "plugins", "import"):
            (d / sub).mkdir(mode=0o700, parents=True, exist_ok=True)
        conf = f"""# written by kgrag-neo4j; rewritten on every start
server.default_listen_address=127.0.0.1
server.bolt.enabled=true
server.bolt.listen_address=127.0.0.1:{port}
server.bolt.advertised_address=127.0.0.1:{port}
server.bolt.tls_level=DISABLED
server.http.enabled=true
server.http.listen_address=127.0.0.1:{http_port}
server.http.advertised_address=127.0.0.1:{http_port}
server.https.enabled=false
# Browser is served from this origin; no other page may read the HTTP API's answers (Neo4j's
# default is '*'). Neo4j has no setting to check the Host header: a page rebound to 127.0.0.1
# still meets the password, which only server.json holds
dbms.security.http_access_control_allow_origin=http://127.0.0.1:{http_port}
dbms.security.auth_enabled=true
# Neo4j Browser works offline; it sends no usage data or crash reports
client.allow_telemetry=false
browser.post_connect_cmd={browser_post_connect_command()}
server.memory.pagecache.size={self.pagecache}
dbms.usage_report.enabled=false
db.tx_log.rotation.retention_policy=keep_none
server.directories.data={d / "data"}
server.directories.logs={d / "logs"}
server.directories.run={d / "run"}
server.directories.plugins={d / "plugins"}
server.directories.import={d / "import"}
"""
        if self.vector_merge_factor is not None:
            # Neo4j merges a vector index's Lucene segments 50 at a time and searches each
            # segment on its own: fewer, larger segments answer faster but cost merges while
            # writing (docs/operations.md, "Performance")
            conf += f"{VECTOR_MERGE_SETTING}={self.vector_merge_factor}\n"
        fd = os.open(conf_dir / "neo4j.conf", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(conf)
        return conf_dir

    def start(self, *, timeout: float = 120.0, echo=None, password: str | None = None) -> ServerInfo:
        """Start the server (installing the jars if needed); reuse it if already running.

        ``password``: the password to set on the first start (else one is generated); on a
        server that already has one, it must be that one (``ServerError`` otherwise)."""
        self.check_password(password)
        self.check_version()
        current = self.status()
        if current.running:
            return current
        state = self._read_state()
        if state.get("pid") and self._pid_alive(state["pid"]):
            # a process is there but Bolt does not answer: it may still be starting
            if self._wait_bolt(state["port"], state["pid"], timeout):
                return self.status()
        version = self.version
        rel = release(version)
        java, _major = find_java(version)
        lib = install(version, echo=echo)
        port = self.port or state.get("port") or DEFAULT_PORT
        if not port_is_free(port):
            raise ServerError(
                f"port {port} on 127.0.0.1 is taken by another process; choose another with `kgrag server start --port N`"
            )
        http_port = self._choose_http_port(state, bolt_port=port)
        conf_dir = self._write_conf(port, http_port)
        d = self.data_dir.resolve()
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        cmd = [
            java,
            "-Xms128m",
            f"-Xmx{self.heap}",
            "-XX:+UseG1GC",
            "--add-opens=java.base/java.nio=ALL-UNNAMED",
            "--add-opens=java.base/java.io=ALL-UNNAMED",
            "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
            "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
            "--enable-native-access=ALL-UNNAMED",
            "-Dlog4j2.disable.jmx=true",
            "-Dfile.encoding=UTF-8",
            "-Djdk.nio.maxCachedBufferSize=1024",
            "-Dio.netty.tryReflectionSetAccessible=true",
            "-cp",
            f"{lib}/*:{d / 'plugins'}/*",
            rel.main_class,
            f"--home-dir={d}",
            f"--config-dir={conf_dir}",
            "--console-mode",
        ]
        log_fd = os.open(self.log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(log_fd, "ab") as log:
            # umask 077: every store file and transaction log Neo4j creates is its owner's only
            proc = subprocess.Popen(
                cmd,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                cwd=d,
                umask=0o077,
            )
        if state.get("password_set"):
            password = state["password"]
        else:
            password = password or state.get("password") or secrets.token_urlsafe(18)
        new_state = {
            "pid": proc.pid,
            "port": port,
            "http_port": http_port,
            "uri": f"bolt://127.0.0.1:{port}",
            "version": version,
            "data_dir": str(self.data_dir),
            "password": password,
            "password_set": bool(state.get("password_set")),
            "started_at": time.time(),
        }
        self._write_state(new_state)
        if not self._wait_bolt(port, proc.pid, timeout, proc=proc):
            self._kill(proc.pid)
            raise ServerError(
                f"Neo4j did not answer on 127.0.0.1:{port} within {timeout:.0f}s; "
                f"last lines of {self.log_path}:\n{self.log_tail()}"
            )
        if not new_state["password_set"]:
            _set_initial_password(port, password)
            new_state["password_set"] = True
            self._write_state(new_state)
        if not wait_http(http_port, timeout):
            self._kill(proc.pid)
            raise ServerError(
                f"Neo4j's HTTP port 127.0.0.1:{http_port} (Neo4j Browser) did not answer within "
                f"{timeout:.0f}s; last lines of {self.log_path}:\n{self.log_tail()}"
            )
        return self.status()

    def check_password(self, password: str | None) -> None:
        """Refuse a password the local server would not use: too short for Neo4j, or not the
        one the server already has (it is never changed behind the user's back)."""
        if password is None:
            return
        recorded = self.recorded_password()
        if recorded is None:
            if len(password) < MIN_PASSWORD_LENGTH:
                raise ServerError(
                    f"the password for the local server must have at least {MIN_PASSWORD_LENGTH} "
                    "characters (Neo4j refuses shorter ones)"
                )
            return
        if password != recorded:
            raise ServerError(
                f"the given password (--password or NEO4J_PASSWORD) is not the one of the local "
                f"server in {self.data_dir}; `kgrag server credentials` prints that one. Unset it, "
                "or point NEO4J_URI at the server it belongs to"
            )

    def _choose_http_port(self, state: dict, *, bolt_port: int) -> int:
        """``http_port`` when given (refused when taken, like the Bolt port); otherwise the last
        one used or 7474, and a free one when that is taken (start and status print the URL)."""
        if self.http_port:
            if self.http_port == bolt_port or not port_is_free(self.http_port):
                raise ServerError(
                    f"HTTP port {self.http_port} on 127.0.0.1 is taken; choose another with `kgrag server start --http-port N`"
                )
            return self.http_port
        for candidate in (state.get("http_port"), DEFAULT_HTTP_PORT):
            if candidate and candidate != bolt_port and port_is_free(candidate):
                return candidate
        return free_port()

    def _wait_bolt(self, port: int, pid: int, timeout: float, proc=None) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc is not None and proc.poll() is not None:
                raise ServerError(
                    f"Neo4j exited during start (code {proc.returncode}); last lines of {self.log_path}:\n{self.log_tail()}"
                )
            if proc is None and not self._pid_alive(pid):
                return False
            if bolt_answers(port):
                return True
            time.sleep(0.25)
        return False

    def log_tail(self, lines: int = 25) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop(self, *, timeout: float = 60.0) -> bool:
        """Stop cleanly (SIGTERM, wait, then SIGKILL). Returns False if nothing was running."""
        state = self._read_state()
        pid = state.get("pid")
        if not isinstance(pid, int) or not self._pid_alive(pid):
            return False
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self._pid_alive(pid):
                break
            _reap(pid)
            time.sleep(0.2)
        else:
            self._kill(pid)
        _reap(pid)
        return True

    def kill(self) -> None:
        """SIGKILL, no clean shutdown: for fault-injection tests."""
        pid = self._read_state().get("pid")
        if isinstance(pid, int) and self._pid_alive(pid):
            self._kill(pid)

    def _kill(self, pid: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while self._pid_alive(pid) and time.monotonic() < deadline:
            _reap(pid)
            time.sleep(0.1)


def _owner_only(top: Path) -> None:
    """Take group and other permissions off every file (to 0600) and folder (to 0700) under
    ``top``; symlinks are left alone."""
    for root, dirs, files in os.walk(top):
        for name in dirs + files:
            path = os.path.join(root, name)
            with contextlib.suppress(OSError):
                st = os.lstat(path)
                if not stat.S_ISLNK(st.st_mode) and st.st_mode & 0o077:
                    os.chmod(path, stat.S_IMODE(st.st_mode) & 0o700)


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def browser_post_connect_command() -> str:
    """What Browser runs on connecting to the local server: the kgrag graph style (captions,
    relation kinds). One line, as neo4j.conf wants; Browser splits commands on ``;`` outside
    quotes, and JSON style text has none."""
    from .browser import style_command

    return style_command().removeprefix(":")  # Browser adds the colon to post-connect commands


def _set_initial_password(port: int, password: str) -> None:
    """Replace the initial neo4j/neo4j password (the driver work is the store's: only
    ``store/`` imports the driver)."""
    from .store.admin import set_initial_password

    set_initial_password(port, password)


@contextlib.contextmanager
def disposable_server(*, heap: str = "1g", pagecache: str = "256m", version: str | None = None) -> Iterator[LocalServer]:
    """A fresh server (``version``, default ``NEO4J_VERSION``) on free ports in a temporary data
    dir, removed afterwards."""
    tmp = Path(tempfile.mkdtemp(prefix="kgrag-neo4j-test-"))
    port = free_port()
    http_port = free_port()
    while http_port == port:
        http_port = free_port()
    server = LocalServer(tmp, port=port, http_port=http_port, heap=heap, pagecache=pagecache, version=version)
    try:
        server.start()
        yield server
    finally:
        server.stop(timeout=30)
        shutil.rmtree(tmp, ignore_errors=True)
