"""Who can read the local server's files (red-team finding 15): the data dir is its owner's only
(0700), every store file, transaction log and log file is 0600, and server.json (which holds
the password) is 0600 however it is written, atomically."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from kgrag_neo4j.server import LocalServer


def _readable_by_others(top: Path) -> list[str]:
    loose = []
    for root, dirs, files in os.walk(top):
        for name in dirs + files:
            path = os.path.join(root, name)
            st = os.lstat(path)
            if not stat.S_ISLNK(st.st_mode) and st.st_mode & 0o077:
                loose.append(f"{os.path.relpath(path, top)} {stat.filemode(st.st_mode)}")
    return loose


@pytest.mark.server_restart
def test_a_running_servers_files_are_its_owners_only(own_server):
    own_server.start(timeout=300)  # running (a fault test may have stopped it)
    data_dir = own_server.data_dir
    assert stat.S_IMODE(os.stat(data_dir).st_mode) == 0o700
    store_files = list((data_dir / "data").rglob("*"))
    assert any(p.name.startswith("neostore") for p in store_files)  # the store is there to check
    assert any("transactions" in p.parts for p in store_files)
    assert _readable_by_others(data_dir) == []
    assert stat.S_IMODE(os.stat(own_server.state_path).st_mode) == 0o600


def test_server_json_is_0600_even_over_a_stale_temporary_file(tmp_path):
    server = LocalServer(tmp_path / "srv", port=7999)
    server.data_dir.mkdir(mode=0o755)
    # what a crash between the write and the rename of an earlier version left behind
    stale = server.data_dir / "server.tmp"
    stale.write_text("{}")
    os.chmod(stale, 0o644)
    old_umask = os.umask(0)  # the most permissive process: the mode must not come from it
    try:
        server._write_state({"port": 7999, "password": "s3cret"})
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE(os.stat(server.state_path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(server.data_dir).st_mode) == 0o700
    assert json.loads(server.state_path.read_text())["password"] == "s3cret"


def test_server_json_is_replaced_whole_or_not_at_all(tmp_path, monkeypatch):
    server = LocalServer(tmp_path / "srv", port=7999)
    server._write_state({"port": 7999, "password": "first"})

    def dies_half_way(value, f, **kwargs):
        f.write('{"port": 79')
        raise OSError("disk full")

    monkeypatch.setattr(json, "dump", dies_half_way)
    with pytest.raises(OSError):
        server._write_state({"port": 7999, "password": "second"})
    monkeypatch.undo()
    assert json.loads(server.state_path.read_text())["password"] == "first"
    assert sorted(p.name for p in server.data_dir.iterdir()) == ["server.json"]  # no temporary file left
