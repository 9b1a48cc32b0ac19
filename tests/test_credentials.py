"""Credentials and transport: the password never shows in reprs, logs, errors or ``--json``
output; TLS schemes are accepted; the local server listens on loopback only and says so.

Wrong-password attempts go to the tests' OWN server: Neo4j locks a user for a few seconds
after repeated failures, which must not disturb the shared server."""

from __future__ import annotations

import logging
import os
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from kgrag_neo4j.cli import cli
from kgrag_neo4j.cli.context import AppContext
from kgrag_neo4j.errors import AuthenticationFailed, ConfigurationError, ConnectionFailed, KgragError
from kgrag_neo4j.server import ServerInfo
from kgrag_neo4j.settings import Neo4jSettings
from kgrag_neo4j.store import Neo4jStore
from kgrag_neo4j.store.runner import connect_driver

from .reliability_helpers import no_leaked_threads  # noqa: F401

SECRET = "s3cr3t-Pa55w0rd-kgrag"
ROOT = Path(__file__).resolve().parents[1]


def test_reprs_and_public_forms_hide_the_password(driver):
    settings = Neo4jSettings(uri="bolt://127.0.0.1:7687", password=SECRET)
    info = ServerInfo(running=True, uri="bolt://127.0.0.1:7687", version="5", pid=1, data_dir="/x", password=SECRET)
    app = AppContext(uri="bolt://127.0.0.1:7687", password=SECRET)
    store = Neo4jStore(driver, namespace="repr-test")
    for shown in (
        repr(settings),
        str(settings),
        repr(info),
        str(info),
        repr(app),
        repr(store),
        str(settings.public_dict()),
        str(info.public_dict()),
    ):
        assert SECRET not in shown
    assert "password" not in info.public_dict() and "password" not in settings.public_dict()


@pytest.mark.parametrize(
    "uri",
    ["bolt://neo4j:{pw}@127.0.0.1:7687", "neo4j+s://neo4j:{pw}@db.example.com", "http://neo4j:{pw}@127.0.0.1:7474"],
)
def test_a_password_inside_the_uri_is_redacted(uri):
    uri = uri.format(pw=SECRET)
    try:
        settings = Neo4jSettings(uri=uri, password=SECRET)
    except ConfigurationError as exc:  # http:// is refused, without echoing the secret
        assert SECRET not in str(exc) and "http" in str(exc)
        return
    assert SECRET not in settings.redacted_uri and SECRET not in str(settings.public_dict())


@pytest.mark.parametrize(
    "uri",
    ["neo4j+s://db.example.com", "bolt+s://db.example.com:7687", "neo4j+ssc://db.example.com", "bolt+ssc://db.example.com:7687"],
)
def test_tls_schemes_are_accepted(uri):
    settings = Neo4jSettings(uri=uri, password=SECRET)
    assert settings.redacted_uri == uri
    assert settings.routing == uri.startswith("neo4j")
    # the driver takes them too (creating a driver opens no connection)
    driver = connect_driver(settings)
    try:
        assert driver.encrypted
    finally:
        driver.close()


def test_an_unreachable_server_error_names_the_problem_not_the_password():
    port = _closed_port()
    settings = Neo4jSettings(uri=f"bolt://127.0.0.1:{port}", password=SECRET)
    with pytest.raises(ConnectionFailed) as caught:
        Neo4jStore.connect(settings)
    message = str(caught.value)
    assert SECRET not in message and "\n" not in message and "cannot reach Neo4j" in message


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- against the tests' own server -------------------------------------------------------------------


@pytest.fixture
def wrong_password_allowed(own_server):
    """Neo4j locks a user for a while after wrong passwords; wait until the right one works
    again, so the tests after these ones (and the fault tests on this server) can log in."""
    yield
    good = own_server.status().settings()
    deadline = time.monotonic() + 60
    while True:
        try:
            Neo4jStore.connect(good).close()
            return
        except AuthenticationFailed:
            if time.monotonic() > deadline:
                raise
            time.sleep(1.0)


def test_wrong_password_is_one_clear_error_in_library_and_logs(own_server, caplog, wrong_password_allowed):
    good = own_server.status().settings()
    wrong = good.with_(password=SECRET)
    with caplog.at_level(logging.DEBUG):
        with pytest.raises(AuthenticationFailed) as caught:
            Neo4jStore.connect(wrong)
        with Neo4jStore.connect(good) as store:  # a successful session logs its HELLO too
            store.list_documents()
    message = str(caught.value)
    assert SECRET not in message and "\n" not in message and "credentials" in message
    assert SECRET not in repr(caught.value)
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert logged, "expected driver debug logs to inspect"
    assert SECRET not in logged and good.password not in logged


def _kgrag(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kgrag_neo4j", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )


@pytest.mark.parametrize("how", ["option", "environment", "json"])
def test_cli_with_a_wrong_password_says_so_in_one_line(own_server, how, wrong_password_allowed):
    uri = own_server.status().uri
    if how == "option":
        proc = _kgrag("--uri", uri, "--password", SECRET, "docs", "list")
    elif how == "environment":
        proc = _kgrag("docs", "list", env={"NEO4J_URI": uri, "NEO4J_PASSWORD": SECRET})
    else:
        proc = _kgrag("--uri", uri, "--password", SECRET, "search", "x", "--embedder", "hashing", "--json")
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "AuthenticationFailed" in lines[0] and "credentials" in lines[0]
    assert SECRET not in proc.stderr + proc.stdout


def test_json_outputs_never_carry_the_password(own_server):
    settings = own_server.status().settings()
    base = ["--uri", settings.uri, "--password", settings.password]
    outputs = []
    for args in (
        ["server", "status", "--data-dir", str(own_server.data_dir), "--json"],
        ["docs", "list", "--json"],
        ["cypher", "run", "server/components"],
        ["search", "anything", "--embedder", "hashing", "--json"],
    ):
        result = CliRunner().invoke(cli, [*base, *args])
        outputs.append(result.output)
        assert settings.password not in result.output
    assert "127.0.0.1 (loopback only)" in outputs[0]


def test_server_listens_on_loopback_only_and_says_so(own_server):
    info = own_server.status()
    port = int(info.uri.rsplit(":", 1)[1])
    listeners = _listeners(port)
    assert listeners, f"nothing listens on port {port}"
    # Java may bind an IPv6 socket to the v4-mapped loopback address: still 127.0.0.1 only
    assert set(listeners) <= {"127.0.0.1", "::ffff:127.0.0.1"}, listeners
    # another loopback address of this machine is refused: the socket is bound to 127.0.0.1
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.2", port), timeout=2).close()
    result = CliRunner().invoke(cli, ["server", "status", "--data-dir", str(own_server.data_dir)])
    assert result.exit_code == 0
    assert "127.0.0.1 (loopback only)" in result.output and info.password not in result.output
    # the recorded password is readable by its owner only
    assert stat.S_IMODE(own_server.state_path.stat().st_mode) == 0o600


def _listeners(port: int) -> list[str]:
    """Local addresses with a LISTEN socket on ``port``, from /proc/net/tcp and tcp6."""
    out = []
    for table, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, state = fields[1], fields[3]
            addr_hex, port_hex = local.split(":")
            if state != "0A" or int(port_hex, 16) != port:
                continue
            out.append(_address(addr_hex, width))
    return out


def _address(hex_addr: str, width: int) -> str:
    raw = bytes.fromhex(hex_addr)
    if width == 8:
        return socket.inet_ntop(socket.AF_INET, raw[::-1])
    # /proc stores IPv6 as four little-endian 32-bit words
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4))
    return socket.inet_ntop(socket.AF_INET6, words)


def test_library_errors_never_echo_the_password_from_settings(own_server, wrong_password_allowed):
    good = own_server.status().settings()
    for broken in (good.with_(database="no-such-db"), good.with_(password=SECRET)):
        try:
            Neo4jStore.connect(broken).close()
        except KgragError as exc:
            assert SECRET not in str(exc) and good.password not in str(exc)
            assert "\n" not in str(exc)
        else:
            pytest.fail(f"connecting with {broken!r} should fail")
