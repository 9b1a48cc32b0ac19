"""What a new user trips on in the first hour (issue 35): the demo on a taken port, a chunk
id to look up, silent empty results, documents named by their file, explanations whose parts
add up. CLI tests run click's runner against the real server."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from kgrag_neo4j.cli import cli
from tests.conftest import load_demo

ROOT = Path(__file__).resolve().parent.parent


# --- 1. the demo on a taken port ----------------------------------------------------------


@pytest.fixture
def held_port():
    """A port on 127.0.0.1 another program listens on (as Neo4j Desktop holds 7687)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        yield s.getsockname()[1]


def test_the_demo_honours_kgrag_port(monkeypatch, tmp_path):
    monkeypatch.setenv("KGRAG_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("KGRAG_PORT", "7787")
    monkeypatch.setenv("KGRAG_HTTP_PORT", "7788")
    server = load_demo().start_server()
    assert (server.port, server.http_port, server.data_dir) == (7787, 7788, tmp_path)


def test_the_demo_picks_a_free_port_and_says_so_when_its_port_is_taken(monkeypatch, tmp_path, held_port, capsys):
    monkeypatch.setenv("KGRAG_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("KGRAG_PORT", raising=False)
    # the port a start without KGRAG_PORT takes: the last one recorded (7687 the first time)
    (tmp_path / "server.json").write_text(json.dumps({"port": held_port}))
    server = load_demo().start_server()
    err = capsys.readouterr().err
    assert server.port and server.port != held_port
    assert f"port {held_port} on 127.0.0.1 is taken" in err and f"starting on {server.port}" in err
    assert "KGRAG_PORT" in err


def test_a_bad_kgrag_port_is_one_line(monkeypatch, tmp_path):
    monkeypatch.setenv("KGRAG_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("KGRAG_PORT", "seventy")
    with pytest.raises(SystemExit, match="KGRAG_PORT must be a port number"):
        load_demo().start_server()


def test_server_start_help_shows_the_port_variables_and_the_readme_activates_the_venv():
    out = CliRunner().invoke(cli, ["server", "start", "--help"], terminal_width=200).stdout
    assert "env var: KGRAG_PORT" in out and "env var: KGRAG_HTTP_PORT" in out
    readme = (ROOT / "README.md").read_text()
    cli_block = readme[readme.index("**CLI**"):]
    assert ". .venv/bin/activate" in cli_block[: cli_block.index("kgrag server start")]
