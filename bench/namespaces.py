"""How much other namespaces move one namespace's hybrid ranking (docs/retrieval.md,
"Namespaces share the indexes' statistics").

    python -m bench namespaces            # a disposable local server, or NEO4J_URI when set

Namespace A holds the repository's docs/ and README.md; its queries are the Markdown headings
of docs/ (what a reader of them asks about). A's hybrid top 10 (vector + full text, RRF, the
defaults) is read alone, then again after another namespace is added next to it:

- ``copy``: the same documents again (every term's document frequency doubles);
- ``code``: the package's Python source as text (the same words, other frequencies).

For each, the table gives the share of queries whose top 10 changed order and whose top 5
changed membership, whose keyword list (BM25 ranks) and vector list (the approximate index)
changed order on their own (the cause shows in which list moves), the share of the top 10
replaced, and the mean and largest change of the fused score of a result that stayed. Nothing
of A changes between the reads; "copy deleted again" reads after the copy is deleted.
"""

from __future__ import annotations

import argparse
import os
import re
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TOP_K = 10


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--embedder", default="wordllama", help="embedder of both namespaces (default wordllama)")
    p.add_argument("--max-queries", type=int, default=60, help="headings used as queries at most")


def queries() -> list[str]:
    """The distinct Markdown headings of docs/, in file order."""
    found: dict[str, None] = {}
    for path in sorted((ROOT / "docs").glob("*.md")):
        for line in path.read_text(encoding="utf-8").splitlines():
            m = re.match(r"#{2,4}\s+(.+)", line)
            if m:
                text = re.sub(r"[`*_\[\]()]", " ", m.group(1)).strip()
                if len(text.split()) >= 2:
                    found.setdefault(text, None)
    return list(found)


def ranking(store: Any, embedder: Any, qs: Sequence[str]) -> dict[str, dict[str, list]]:
    """Per query: the hybrid top 10 (id, fused score) and the keyword and vector lists' ids."""
    from kgrag_neo4j import HybridRetriever

    hybrid = HybridRetriever(store, embedder)
    out = {}
    for q in qs:
        fetch = TOP_K * hybrid.overfetch
        vector = [r.id for r in store.search_chunks(embedder.embed([q], input_type="query")[0], fetch)]
        keyword = [r.id for r in store.search_chunks_keyword(q, fetch)]
        out[q] = {"hybrid": [(r.id, r.score) for r in hybrid.retrieve(q, TOP_K)], "keyword": keyword, "vector": vector}
    return out


def compare(before: dict[str, dict[str, list]], after: dict[str, dict[str, list]]) -> dict[str, float]:
    n = len(before)
    changed = {"hybrid order": 0, "hybrid top 5 set": 0, "keyword order": 0, "vector order": 0}
    deltas: list[float] = []
    replaced = 0.0
    for q, b in before.items():
        a = after[q]
        changed["hybrid order"] += [i for i, _ in b["hybrid"]] != [i for i, _ in a["hybrid"]]
        changed["hybrid top 5 set"] += {i for i, _ in b["hybrid"][:5]} != {i for i, _ in a["hybrid"][:5]}
        changed["keyword order"] += b["keyword"][:TOP_K] != a["keyword"][:TOP_K]
        changed["vector order"] += b["vector"][:TOP_K] != a["vector"][:TOP_K]
        now = dict(a["hybrid"])
        deltas += [abs(now[i] - s) for i, s in b["hybrid"] if i in now]
        replaced += sum(1 for i, _ in b["hybrid"] if i not in now) / max(1, len(b["hybrid"]))
    share = {k: v / n for k, v in changed.items()}
    return {
        **share,
        "top 10 replaced": replaced / n,
        "mean |d score| (kept)": sum(deltas) / max(1, len(deltas)),
        "max |d score| (kept)": max(deltas, default=0.0),
    }


@contextmanager
def _settings() -> Iterator[Any]:
    from kgrag_neo4j.settings import Neo4jSettings

    if os.environ.get("NEO4J_URI"):
        yield Neo4jSettings.from_env()
        return
    from kgrag_neo4j.server import disposable_server

    with disposable_server() as server:
        yield server.status().settings()


def measure(settings: Any, embedder: Any, qs: Sequence[str]) -> dict[str, dict[str, float]]:
    """The table's rows: scenario -> measures (see the module docstring)."""
    from kgrag_neo4j import Ingestor, Neo4jStore
    from kgrag_neo4j.ingestion.files import expand_paths

    run = uuid.uuid4().hex[:8]
    names = {"a": f"bench-ns-a-{run}", "copy": f"bench-ns-copy-{run}", "code": f"bench-ns-code-{run}"}
    docs = expand_paths([str(ROOT / "docs"), str(ROOT / "README.md")], extensions=(".md",))
    code = sorted((ROOT / "kgrag_neo4j").rglob("*.py"))
    rows: dict[str, dict[str, float]] = {}
    counts: dict[str, int] = {}
    with Neo4jStore.connect(settings, namespace=names["a"]) as a:
        try:
            counts["A"] = sum(Ingestor(a, embedder).ingest_file(p, source=str(p.relative_to(ROOT))).chunk_count for p in docs)
            alone = ranking(a, embedder, qs)
            rows["A again, nothing added"] = compare(alone, ranking(a, embedder, qs))
            copy = a.with_namespace(names["copy"])
            for path in docs:
                Ingestor(copy, embedder).ingest_file(path, source=str(path.relative_to(ROOT)))
            rows["+ a copy of A"] = compare(alone, ranking(a, embedder, qs))
            copy.delete_namespace()
            rows["copy deleted again"] = compare(alone, ranking(a, embedder, qs))
            other = a.with_namespace(names["code"])
            counts["code"] = sum(
                Ingestor(other, embedder).ingest_text(p.read_text(encoding="utf-8"), source=str(p.relative_to(ROOT))).chunk_count
                for p in code
            )
            rows["+ the Python source"] = compare(alone, ranking(a, embedder, qs))
        finally:
            for ns in names.values():
                a.with_namespace(ns).delete_namespace()
    print(f"chunks: A {counts.get('A')}, Python source {counts.get('code')}")
    return rows


def run(args: argparse.Namespace) -> None:
    from kgrag_neo4j.providers.select import select_embedder

    embedder = select_embedder(args.embedder)
    qs = queries()[: args.max_queries]
    started = time.perf_counter()
    with _settings() as settings:
        rows = measure(settings, embedder, qs)
    keys = list(next(iter(rows.values())))
    print(f"\nnamespace A: docs/ + README.md; {len(qs)} heading queries; hybrid top {TOP_K}; {embedder.name}")
    print("| scenario | " + " | ".join(keys) + " |")
    print("|---" * (len(keys) + 1) + "|")
    for name, measures in rows.items():
        print(f"| {name} | " + " | ".join(f"{v:.3f}" for v in measures.values()) + " |")
    print(f"({time.perf_counter() - started:.0f} s)")
