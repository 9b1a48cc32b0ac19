"""``Ingestor.ingest_run``: what ``kgrag ingest`` calls, as a library method: files, folders and
globs selected, what the selection skips recorded, the files ingested in batches, a named
source for one file, and what an observer hears, on the real server."""

from __future__ import annotations

import os

import pytest

from kgrag_neo4j.errors import InputError
from kgrag_neo4j.ingestion.batch import IngestObserver
from kgrag_neo4j.ingestion.ingestor import Ingestor


class Recorder(IngestObserver):
    def __init__(self):
        self.events = []

    def skipped(self, skipped):
        self.events.append(("skipped", os.path.basename(skipped.path), skipped.named))

    def started(self, files):
        self.events.append(("started", files))

    def finished(self, outcome):
        self.events.append(("finished", os.path.basename(outcome.path), outcome.status))


def _tree(root):
    (root / "kb").mkdir()
    for i in range(3):
        (root / "kb" / f"note-{i}.md").write_text(f"# Note {i}\n\nThe mill by the river turns wheel number {i}.\n")
    (root / "kb" / "empty.txt").write_text("  \n")
    os.mkfifo(root / "kb" / "pipe.txt")  # not a regular file: skipped, never opened
    (root / "loose.txt").write_text("A loose file about the ferry across the river.\n")
    return root


def test_a_run_over_a_folder_and_a_glob_records_every_path(store, hashing_embedder, tmp_path):
    root = _tree(tmp_path)
    seen = Recorder()
    ingestor = Ingestor(store, hashing_embedder)
    tally = ingestor.ingest_run([root / "kb", str(root / "*.txt")], observer=seen)
    by_name = {os.path.basename(r["path"]): r for r in tally.rows}
    assert {n: r["status"] for n, r in by_name.items()} == {
        "note-0.md": "new",
        "note-1.md": "new",
        "note-2.md": "new",
        "loose.txt": "new",
        "empty.txt": "failed",
        "pipe.txt": "skipped",
    }
    assert "empty" in by_name["empty.txt"]["error"]
    assert (tally.counts["new"], tally.counts["failed"], tally.counts["skipped"]) == (4, 1, 1)
    assert tally.failed and tally.stopped is None
    # the observer heard the skip first, then the count, then each file once
    assert seen.events[0] == ("skipped", "pipe.txt", False) and seen.events[1] == ("started", 5)
    assert sorted(e[1] for e in seen.events[2:]) == ["empty.txt", "loose.txt", "note-0.md", "note-1.md", "note-2.md"]
    assert {d.source for d in store.list_documents()} >= {str((root / "loose.txt").resolve())}
    # again: nothing changed
    again = ingestor.ingest_run([root / "kb", root / "loose.txt"])
    assert again.counts["unchanged"] == 4 and again.summary()["chunks"] == 0


def test_a_named_source_is_for_one_file_only(store, hashing_embedder, tmp_path):
    root = _tree(tmp_path)
    ingestor = Ingestor(store, hashing_embedder)
    tally = ingestor.ingest_run([root / "loose.txt"], source="handbook/ferry")
    assert [r["status"] for r in tally.rows] == ["new"] and not tally.failed
    assert "handbook/ferry" in {d.source for d in store.list_documents()}
    with pytest.raises(InputError, match="source names one document; the paths give 4 files"):
        ingestor.ingest_run([root / "kb"], source="x")


def test_a_path_that_matches_nothing_is_refused_before_anything_is_written(store, hashing_embedder, tmp_path):
    with pytest.raises(InputError, match="nothing-here"):
        Ingestor(store, hashing_embedder).ingest_run([tmp_path / "nothing-here"])
    assert store.list_documents() == []
