"""The local server serves Neo4j Browser on loopback; its credentials are printed by one command
only; a password given for it is honoured or refused; the jar cache is per jar set, so a cache
holding an older set is re-resolved, not taken."""

from __future__ import annotations

import hashlib
import json
import shutil
import socket
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner
from neo4j import GraphDatabase

from kgrag_neo4j import loopback, neo4j_jars, neo4j_release
from kgrag_neo4j import server as srv
from kgrag_neo4j.cli import cli
from kgrag_neo4j.errors import ServerError

#: what the developer's shell may name is not what these tests talk to
CLEAN_ENV = {
    "NEO4J_URI": None,
    "NEO4J_PASSWORD": None,
    "NEO4J_USERNAME": None,
    "KGRAG_DATA_DIR": None,
    "KGRAG_PORT": None,
    "KGRAG_HTTP_PORT": None,
}


def kgrag(*args: str):
    return CliRunner().invoke(cli, list(args), env=CLEAN_ENV, catch_exceptions=False)


def _get(url: str) -> tuple[int, str]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=30) as response:
        return response.status, response.read().decode("utf-8", "replace")


def _listening_addresses(port: int) -> list[str]:
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hexport = local.split(":")
            if int(hexport, 16) == port and state == "0A":
                found.append(address)
    return found


@pytest.mark.slow
def test_browser_on_loopback_with_the_given_password(tmp_path):
    data = str(tmp_path / "srv")
    port, http_port = loopback.free_port(), loopback.free_port()
    password = "browser-test-pw-1"
    started = kgrag(
        "--password", password, "server", "start", "--data-dir", data, "--port", str(port), "--http-port", str(http_port)
    )
    assert started.exit_code == 0, started.output
    try:
        assert started.stdout.strip().splitlines()[-1] == f"bolt://127.0.0.1:{port}"
        browser_url = f"http://127.0.0.1:{http_port}/browser/"
        assert f"Neo4j Browser: {browser_url}" in started.stderr

        # curl http://127.0.0.1:PORT/browser/ gives the Browser app, from loopback only
        code, body = _get(browser_url)
        assert code == 200 and "<title>Neo4j Browser</title>" in body
        assert _listening_addresses(http_port) and all(
            a in ("0100007F", "0000000000000000FFFF00000100007F") for a in _listening_addresses(http_port)
        )
        discovery = json.loads(_get(f"http://127.0.0.1:{http_port}/")[1])
        assert discovery["bolt_direct"] == f"bolt://127.0.0.1:{port}"

        status_out = kgrag("server", "status", "--data-dir", data, "--json").stdout
        status = json.loads(status_out)
        assert status["browser_url"] == browser_url and password not in status_out
        assert "browser_url" in kgrag("server", "status", "--data-dir", data).stdout

        # the password given at the first start is the server's; only `credentials` prints it
        creds = json.loads(kgrag("server", "credentials", "--data-dir", data, "--json").stdout)
        assert creds == {"uri": f"bolt://127.0.0.1:{port}", "user": "neo4j", "password": password, "browser_url": browser_url}
        assert password in kgrag("server", "credentials", "--data-dir", data).stdout
        for log in Path(data, "logs").rglob("*"):
            if log.is_file():
                assert password not in log.read_text(errors="replace"), f"password in {log}"
        with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=("neo4j", password)) as driver:
            config = {r["name"]: r["value"] for r in driver.execute_query("CALL dbms.clientConfig()").records}
        assert config["client.allow_telemetry"] in (False, "false")  # Browser sends nothing out

        # a URI naming the local server needs no password: the recorded one is used
        by_uri = kgrag("--data-dir", data, "--uri", f"neo4j://localhost:{port}", "cypher", "run", "server/components")
        assert by_uri.exit_code == 0, by_uri.output
        assert json.loads(by_uri.stdout)[0]["name"] == "Neo4j Kernel"

        # a different password or user for the local server is refused with one line, never ignored
        for args, message in (
            (("--password", "not-the-password"), "not the one of the local server"),
            (("--user", "alice"), "user is 'neo4j', not 'alice'"),
        ):
            refused = kgrag("--data-dir", data, *args, "cypher", "run", "server/components")
            assert refused.exit_code == 1 and message in refused.stderr, refused.output
            assert "Traceback" not in refused.output
        again = kgrag("--password", "not-the-password", "server", "start", "--data-dir", data)
        assert again.exit_code == 1 and "credentials" in again.stderr
        right = kgrag("--password", password, "server", "start", "--data-dir", data, "--json")
        assert right.exit_code == 0 and json.loads(right.stdout)["browser_url"] == browser_url
    finally:
        srv.LocalServer(data).stop()
    assert kgrag("server", "credentials", "--data-dir", data).exit_code == 1


def test_short_password_is_refused_before_anything_starts(tmp_path):
    result = kgrag(
        "--password", "short", "server", "start", "--data-dir", str(tmp_path / "s"), "--port", str(loopback.free_port())
    )
    assert result.exit_code == 1 and "at least 8 characters" in result.stderr
    assert not (tmp_path / "s" / "server.json").exists()


def test_a_password_for_another_server_is_not_the_local_ones(monkeypatch):
    from kgrag_neo4j.cli.context import AppContext

    assert AppContext(uri="neo4j+s://db.example.com", password="remote-pw").local_server_password() is None
    assert AppContext(uri="bolt://127.0.0.1:7687", password="local-pw").local_server_password() == "local-pw"
    monkeypatch.delenv("NEO4J_URI", raising=False)
    assert AppContext(password="local-pw").local_server_password() == "local-pw"


def test_http_port_taken_is_a_clear_error(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        taken = s.getsockname()[1]
        with pytest.raises(ServerError, match=f"HTTP port {taken} .* taken.*--http-port"):
            srv.LocalServer(tmp_path / "x", port=loopback.free_port(), http_port=taken).start()


def test_default_http_port_moves_when_taken(monkeypatch, tmp_path):
    with socket.socket() as a, socket.socket() as b:
        for s in (a, b):
            s.bind(("127.0.0.1", 0))
            s.listen()
        remembered, default = a.getsockname()[1], b.getsockname()[1]
        monkeypatch.setattr(srv, "DEFAULT_HTTP_PORT", default)
        chosen = srv.LocalServer(tmp_path)._choose_http_port({"http_port": remembered}, bolt_port=7687)
        assert chosen not in (remembered, default, 7687) and loopback.port_is_free(chosen)
    free = loopback.free_port()
    assert srv.LocalServer(tmp_path)._choose_http_port({"http_port": free}, bolt_port=7687) == free


def _fake_set(lib: Path, *, browser: bool = True) -> None:
    lib.mkdir(parents=True)
    (lib / f"neo4j-{neo4j_release.NEO4J_VERSION}.jar").write_bytes(b"jar")
    if browser:
        (lib / f"neo4j-browser-{neo4j_release.BROWSER_VERSION}.jar").write_bytes(b"jar")


def test_a_jar_folder_counts_only_for_the_set_it_was_resolved_for(tmp_path):
    pom = neo4j_jars._POM.format(version=neo4j_release.NEO4J_VERSION, browser_version=neo4j_release.BROWSER_VERSION)
    fingerprint = hashlib.sha256(pom.encode()).hexdigest()
    lib = tmp_path / "set" / "lib"
    _fake_set(lib)
    assert not neo4j_jars._complete(lib, pom, neo4j_release.NEO4J_VERSION, neo4j_release.BROWSER_VERSION)  # no marker
    (lib.parent / ".complete").write_text(neo4j_release.NEO4J_VERSION)  # the old marker: just the version
    assert not neo4j_jars._complete(lib, pom, neo4j_release.NEO4J_VERSION, neo4j_release.BROWSER_VERSION)
    (lib.parent / ".complete").write_text(fingerprint)
    assert neo4j_jars._complete(lib, pom, neo4j_release.NEO4J_VERSION, neo4j_release.BROWSER_VERSION)
    (lib / f"neo4j-browser-{neo4j_release.BROWSER_VERSION}.jar").unlink()
    assert not neo4j_jars._complete(lib, pom, neo4j_release.NEO4J_VERSION, neo4j_release.BROWSER_VERSION)


@pytest.mark.slow
def test_a_cache_with_the_old_jar_set_is_resolved_again(monkeypatch, tmp_path):
    # the layout and marker of the jar cache before Neo4j Browser: server jars only
    monkeypatch.setenv("KGRAG_CACHE_DIR", str(tmp_path))
    old = tmp_path / f"neo4j-{neo4j_release.NEO4J_VERSION}"
    _fake_set(old / "lib", browser=False)
    (old / ".complete").write_text(neo4j_release.NEO4J_VERSION)
    lib = neo4j_jars.install()
    assert lib == neo4j_jars.jars_dir() and lib != old / "lib"
    assert (lib / f"neo4j-browser-{neo4j_release.BROWSER_VERSION}.jar").stat().st_size > 1_000_000
    assert (lib / f"neo4j-server-{neo4j_release.NEO4J_VERSION}.jar").is_file()
    assert (old / "lib" / f"neo4j-{neo4j_release.NEO4J_VERSION}.jar").read_bytes() == b"jar"  # left for whoever uses it
    assert neo4j_jars.install() == lib  # complete now: no second resolve
    shutil.rmtree(tmp_path, ignore_errors=True)
