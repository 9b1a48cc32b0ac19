"""The local server from the official jars: start, reuse, persist, stop, and clear errors."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from kgrag_neo4j import java_runtime, loopback, neo4j_jars, neo4j_release
from kgrag_neo4j import server as srv
from kgrag_neo4j.cli import cli
from kgrag_neo4j.errors import ServerError
from kgrag_neo4j.settings import Neo4jSettings
from kgrag_neo4j.store import Neo4jStore


def run(*args: str, env: dict | None = None):
    result = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
    return result


@pytest.mark.slow
def test_start_status_reuse_persist_stop(tmp_path):
    data = str(tmp_path / "srv")
    port = str(loopback.free_port())
    # an HTTP port of its own: the default 7474 may be taken by another suite's server between
    # the check and Neo4j's bind (the start then fails)
    http_port = str(loopback.free_port())
    while http_port == port:
        http_port = str(loopback.free_port())
    started = run("server", "start", "--data-dir", data, "--port", port, "--http-port", http_port, "--vector-merge-factor", "10")
    assert started.exit_code == 0, started.output
    uri = started.stdout.strip().splitlines()[-1]
    assert uri == f"bolt://127.0.0.1:{port}"
    try:
        status = json.loads(run("server", "status", "--data-dir", data, "--json").stdout)
        assert status["running"] is True and status["uri"] == uri and status["version"] == neo4j_release.NEO4J_VERSION
        assert status["data_dir"] == data and "loopback" in status["listen"]
        assert "password" not in json.dumps(status)
        # Neo4j lists the settings it started with in its debug log: the vector index's merge
        # factor was read (an unknown or misspelt setting stops a strict-validation start)
        debug_log = (Path(data) / "logs" / "debug.log").read_text()
        assert f"{srv.VECTOR_MERGE_SETTING}=10" in debug_log
        again = run("server", "start", "--data-dir", data)
        assert again.exit_code == 0 and again.stdout.strip().splitlines()[-1] == uri
        assert json.loads(run("server", "status", "--data-dir", data, "--json").stdout)["pid"] == status["pid"]
        info = srv.LocalServer(data).status()
        with Neo4jStore.connect(info.settings(), namespace="persist") as store:
            store.init_schema(4)
            store.runner.write("schema/record_embedding_config", namespace="persist", model="m", dimensions=4, slot=1)
        assert run("server", "stop", "--data-dir", data).stdout.strip() == "stopped"
        assert json.loads(run("server", "status", "--data-dir", data, "--json").stdout)["running"] is False
        assert run("server", "stop", "--data-dir", data).stdout.strip() == "not running"
        info = srv.LocalServer(data).start()
        with Neo4jStore.connect(info.settings(), namespace="persist") as store:
            assert store.schema_status().dimensions == 4  # data survived the restart
    finally:
        srv.LocalServer(data).stop()


def test_the_server_listens_on_loopback_only(neo4j_settings):
    if os.environ.get("NEO4J_URI"):
        pytest.skip("an external server was given; its listen address is not ours")
    port = int(neo4j_settings.uri.rsplit(":", 1)[1])
    listening = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hexport = local.split(":")
            if int(hexport, 16) == port and state == "0A":  # 0A: LISTEN
                listening.append(address)
    # 127.0.0.1 as IPv4 or IPv4-mapped IPv6; never the wildcard address
    assert listening and all(a in ("0100007F", "0000000000000000FFFF00000100007F") for a in listening), listening


def test_the_vector_merge_factor_is_neo4js_unless_asked(monkeypatch, tmp_path):
    monkeypatch.delenv("KGRAG_NEO4J_VECTOR_MERGE_FACTOR", raising=False)
    conf = srv.LocalServer(tmp_path / "a")._write_conf(7687, 7474) / "neo4j.conf"
    assert srv.VECTOR_MERGE_SETTING not in conf.read_text()
    monkeypatch.setenv("KGRAG_NEO4J_VECTOR_MERGE_FACTOR", "12")
    conf = srv.LocalServer(tmp_path / "b")._write_conf(7687, 7474) / "neo4j.conf"
    assert f"\n{srv.VECTOR_MERGE_SETTING}=12\n" in conf.read_text()
    assert srv.LocalServer(tmp_path / "c", vector_merge_factor=4).vector_merge_factor == 4  # the argument wins
    monkeypatch.setenv("KGRAG_NEO4J_VECTOR_MERGE_FACTOR", "ten")
    with pytest.raises(ServerError, match="KGRAG_NEO4J_VECTOR_MERGE_FACTOR must be a whole number, got 'ten'"):
        srv.LocalServer(tmp_path / "d")
    with pytest.raises(ServerError, match="vector merge factor must be"):
        srv.LocalServer(tmp_path / "e", vector_merge_factor=1)
    monkeypatch.delenv("KGRAG_NEO4J_VECTOR_MERGE_FACTOR")
    bad = run("server", "start", "--data-dir", str(tmp_path / "f"), "--vector-merge-factor", "1")
    assert bad.exit_code == 2 and "--vector-merge-factor" in bad.output and "Traceback" not in bad.output


def test_port_taken_is_a_clear_error(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        with pytest.raises(ServerError, match=f"port {port} .* taken.*--port"):
            srv.LocalServer(tmp_path / "x", port=port).start()


def test_server_exiting_during_start_shows_its_log(tmp_path):
    server = srv.LocalServer(tmp_path / "bad", port=loopback.free_port(), heap="not-a-size")
    with pytest.raises(ServerError, match="exited during start") as err:
        server.start(timeout=60)
    assert "Xmx" in str(err.value) or "heap" in str(err.value).lower()


def test_java_missing_or_unsupported(monkeypatch, tmp_path):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.delenv("KGRAG_JAVA_HOME", raising=False)
    monkeypatch.setattr(java_runtime, "JAVA_SEARCH_ROOTS", ())
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ServerError, match="Java is not installed.*17 or 21"):
        java_runtime.find_java()
    java25 = Path("/usr/lib/jvm/temurin-25-jdk-amd64/bin/java")
    if java25.exists():
        (tmp_path / "java").symlink_to(java25)
        with pytest.raises(ServerError, match="Java 25.*needs 17 or 21|needs 17 or 21.*Java 25"):
            java_runtime.find_java()


def test_maven_missing(monkeypatch, tmp_path):
    monkeypatch.setenv("KGRAG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ServerError, match="Maven"):
        neo4j_jars.install()


def test_install_is_idempotent_and_quick():
    lib = neo4j_jars.install()
    assert any(lib.glob("neo4j-5.26*.jar"))
    assert neo4j_jars.install() == lib


def test_settings_accept_routing_and_tls_schemes_and_hide_passwords():
    for uri in ("neo4j://db:7687", "neo4j+s://x.databases.neo4j.io", "bolt+s://h:7687", "bolt://u:pw@h:7687"):
        s = Neo4jSettings(uri=uri, password="hunter2-secret")
        assert "hunter2" not in repr(s) and "pw" not in s.redacted_uri
    with pytest.raises(Exception, match="unsupported Neo4j URI scheme"):
        Neo4jSettings(uri="http://localhost:7474")
