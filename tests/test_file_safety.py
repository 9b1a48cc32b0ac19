"""What an ingest reads (red-team findings 9, 10, 11): one document per file however the file
is named, only regular files (FIFOs, devices and symlinks to them are reported and skipped,
never read), symlinks leaving a folder only on request, and a bad file name failing alone.

The CLI runs in a subprocess with a time limit and a memory cap: reading a FIFO would block
forever and reading /dev/zero would never end, and a test must fail, not hang the suite."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from kgrag_neo4j.errors import InputError
from kgrag_neo4j.ingestion.extractors import ExtractorRegistry
from kgrag_neo4j.ingestion.files import read_regular_file, select_files
from kgrag_neo4j.ingestion.ingestor import Ingestor
from kgrag_neo4j.retrieval.retrievers import GraphRetriever, HybridRetriever, VectorRetriever

from .reliability_helpers import no_leaked_threads  # noqa: F401

#: bounds for a CLI run that must not hang or eat the machine's memory
RUN_SECONDS = 180
MEMORY_CAP = 3 * 2**30


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def run_cli(neo4j_settings, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    base = [sys.executable, "-m", "kgrag_neo4j", "--uri", neo4j_settings.uri, "--user", neo4j_settings.user]
    env = {**os.environ, "NEO4J_PASSWORD": neo4j_settings.password or ""}
    if neo4j_settings.database:
        base += ["--database", neo4j_settings.database]
    try:
        return subprocess.run(
            base + list(args), capture_output=True, timeout=RUN_SECONDS, cwd=cwd, env=env, preexec_fn=_cap_memory
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"kgrag {' '.join(args)} did not finish in {RUN_SECONDS}s (it read a FIFO or a device?)")


@pytest.fixture
def kgrag(kgrag_cli):
    """``kgrag ARGS`` against the test server; returns (exit code, stdout, stderr)."""

    def invoke(*args: str, input: str | None = None):
        result = kgrag_cli(*args, input=input)
        return result.exit_code, result.stdout, result.stderr

    return invoke


# -- 9. one document per file ------------------------------------------------------------------------


def test_the_same_file_under_five_names_is_one_document(store, hashing_embedder, tmp_path, monkeypatch):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Notes\n\nNeo4j keeps the graph.")
    (tmp_path / "link.md").symlink_to(docs / "a.md")
    (tmp_path / "other").mkdir()
    monkeypatch.chdir(tmp_path)
    names = ["docs/a.md", "./docs/a.md", str(docs / "a.md"), "other/../docs/a.md", "link.md"]
    ingestor = Ingestor(store, hashing_embedder)
    results = [ingestor.ingest_file(name) for name in names]
    assert [r.status for r in results] == ["new"] + ["unchanged"] * 4
    assert len({r.document_id for r in results}) == 1
    [document] = store.list_documents()
    assert document.source == str((docs / "a.md").resolve())


def test_the_cli_keeps_one_document_per_file_and_source_sets_the_identity(store, kgrag, tmp_path, monkeypatch):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Notes\n\nNeo4j keeps the graph.")
    (docs / "b.md").write_text("# More\n\nVectors live in an index.")
    (tmp_path / "link.md").symlink_to(docs / "a.md")
    monkeypatch.chdir(tmp_path)
    ns = ["--namespace", store.namespace, "--embedder", "hashing"]
    for name in ("docs/a.md", "./docs/a.md", str(docs / "a.md"), "docs/../docs/a.md", "link.md", "docs"):
        code, _, err = kgrag("ingest", name, *ns)
        assert code == 0, err
    assert sorted(d.source for d in store.list_documents()) == [str(docs / "a.md"), str(docs / "b.md")]

    code, out, err = kgrag("ingest", "docs/a.md", "--source", "handbook/notes", "--json", *ns)
    assert code == 0, err
    assert json.loads(out)["files"][0]["status"] == "new"
    assert "handbook/notes" in {d.source for d in store.list_documents()}
    code, _, err = kgrag("ingest", "docs", "--source", "x", *ns)
    assert code == 1 and "source names one document" in err and "Traceback" not in err


# -- 10. only regular files are read ------------------------------------------------------------------


@pytest.fixture
def hostile_folder(tmp_path):
    kb = tmp_path / "kb"
    (kb / "sub").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (kb / "good.md").write_text("# Good\n\nA regular file about graphs.")
    (kb / "sub" / "also.txt").write_text("Another regular file.")
    os.mkfifo(kb / "pipe.txt")
    (kb / "zero.txt").symlink_to("/dev/zero")
    (kb / "null.md").symlink_to("/dev/null")
    os.mkfifo(outside / "far-pipe.txt")
    (kb / "far-pipe.txt").symlink_to(outside / "far-pipe.txt")
    (outside / "secret.txt").write_text("outside the folder")
    (kb / "secret.txt").symlink_to(outside / "secret.txt")
    (kb / "inside.md").symlink_to(kb / "good.md")
    (kb / "loop").symlink_to(kb)
    return kb


def test_fifos_devices_and_symlinks_to_them_are_reported_and_skipped(neo4j_settings, schema_ready, namespace, hostile_folder):
    done = run_cli(neo4j_settings, "ingest", str(hostile_folder), "--namespace", namespace, "--embedder", "hashing", "--json")
    stderr = done.stderr.decode(errors="replace")
    assert "Traceback" not in stderr, stderr
    report = json.loads(done.stdout)
    status = {Path(r["path"]).name: r["status"] for r in report["files"]}
    assert status == {
        "good.md": "new",
        "also.txt": "new",
        "pipe.txt": "skipped",
        "zero.txt": "skipped",
        "null.md": "skipped",
        "far-pipe.txt": "skipped",
        "secret.txt": "skipped",  # a symlink that leaves the folder
    }
    reasons = {Path(r["path"]).name: r.get("error", "") for r in report["files"]}
    assert "FIFO" in reasons["pipe.txt"] and "device" in reasons["zero.txt"]
    assert "--follow-symlinks" in reasons["secret.txt"]
    assert done.returncode == 0  # what a folder holds besides documents is not an error

    followed = run_cli(
        neo4j_settings,
        "ingest",
        str(hostile_folder),
        "--namespace",
        namespace,
        "--embedder",
        "hashing",
        "--follow-symlinks",
        "--json",
    )
    status = {Path(r["path"]).name: r["status"] for r in json.loads(followed.stdout)["files"]}
    assert status["secret.txt"] == "new" and status["far-pipe.txt"] == "skipped" and status["good.md"] == "unchanged"


def test_a_named_fifo_or_device_fails_without_being_read(neo4j_settings, schema_ready, namespace, hostile_folder):
    done = run_cli(
        neo4j_settings,
        "ingest",
        str(hostile_folder / "pipe.txt"),
        "/dev/zero",
        str(hostile_folder / "good.md"),
        "--namespace",
        namespace,
        "--embedder",
        "hashing",
    )
    stderr = done.stderr.decode(errors="replace")
    assert done.returncode == 1 and "Traceback" not in stderr
    assert "1 new" in done.stdout.decode() and "2 failed" in done.stdout.decode()
    assert "not a regular file (a FIFO)" in stderr and "not a regular file (a character device)" in stderr


def test_the_safe_reader_refuses_what_is_not_a_regular_file_and_caps_the_size(tmp_path, store, hashing_embedder):
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * 2000)
    for path, message in ((fifo, "FIFO"), ("/dev/zero", "character device"), (tmp_path, "folder"), (big, "over the limit")):
        with pytest.raises(InputError, match=message):
            read_regular_file(path, max_bytes=1000)
    ingestor = Ingestor(store, hashing_embedder)
    for path in (fifo, "/dev/zero", "/dev/null"):
        with pytest.raises(InputError, match="not a regular file"):
            ingestor.ingest_file(path, content_type="text/plain")
    assert store.list_documents() == []


def _remove_tree(top: Path) -> None:
    """rmtree recurses once per level; this does not."""
    folders, stack = [], [top]
    while stack:
        folder = stack.pop()
        folders.append(folder)
        for entry in os.scandir(folder):
            if entry.is_dir(follow_symlinks=False):
                stack.append(Path(entry.path))
            else:
                os.unlink(entry.path)
    for folder in reversed(folders):
        os.rmdir(folder)


def test_a_folder_1200_levels_deep_is_walked(neo4j_settings, schema_ready, namespace):
    # not under pytest's tmp_path: its clean-up recurses once per level and would fail
    root = Path(tempfile.mkdtemp(prefix="kgrag-deep-"))
    try:
        deep = root / "kb"
        deep.mkdir()
        for _ in range(1200):  # os.makedirs would recurse once per level too
            deep = deep / "d"
            deep.mkdir()
        (deep / "bottom.txt").write_text("the bottom of a deep folder")
        (root / "kb" / "top.txt").write_text("the top")
        selection = select_files([str(root / "kb")], extensions=ExtractorRegistry.default().extensions)
        assert [Path(f).name for f in selection.files] == ["top.txt", "bottom.txt"] and selection.skipped == []
        done = run_cli(neo4j_settings, "ingest", str(root / "kb"), "--namespace", namespace, "--embedder", "hashing")
        assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
        assert "2 new" in done.stdout.decode()
    finally:
        _remove_tree(root)


# -- 11. a bad file name fails alone; so does a bad query --------------------------------------------


def test_a_file_name_that_is_not_utf8_fails_alone(neo4j_settings, schema_ready, namespace, tmp_path):
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "a.txt").write_text("first good file")
    Path(os.fsdecode(bytes(kb) + b"/caf\xe9.txt")).write_text("a Latin-1 file name")
    (kb / "z.txt").write_text("last good file")
    done = run_cli(neo4j_settings, "ingest", str(kb), "--namespace", namespace, "--embedder", "hashing")
    stderr = done.stderr.decode(errors="replace")
    assert done.returncode == 1 and "Traceback" not in stderr
    assert "2 new" in done.stdout.decode() and "1 failed" in done.stdout.decode()
    failed = [line for line in stderr.splitlines() if line.startswith("failed:")]
    assert len(failed) == 1 and "not valid UTF-8" in failed[0] and "caf\\udce9.txt" in failed[0]

    as_json = run_cli(neo4j_settings, "ingest", str(kb), "--namespace", namespace, "--embedder", "hashing", "--json")
    rows = json.loads(as_json.stdout)["files"]  # valid JSON, the name escaped
    assert sorted(r["status"] for r in rows) == ["failed", "unchanged", "unchanged"]


def test_a_query_that_is_not_unicode_is_one_error(store, hashing_embedder, kgrag):
    Ingestor(store, hashing_embedder).ingest_text("Neo4j keeps the graph.", "a.txt")
    for retriever in (
        VectorRetriever(store, hashing_embedder),
        HybridRetriever(store, hashing_embedder),
        GraphRetriever(store, hashing_embedder),
    ):
        with pytest.raises(InputError, match="not valid Unicode"):
            retriever.retrieve("graph \udcff", 3)
    code, out, err = kgrag("search", "graph \udcff", "--namespace", store.namespace, "--embedder", "hashing")
    assert code == 1 and "Traceback" not in err and "not valid Unicode" in err
