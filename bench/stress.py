"""``python -m bench stress --seconds N``: concurrent ingest, edge building, deletes and
retrievals on one namespace for a bounded time; reports operations, errors and latency.

Writers ingest overlapping documents (a small pool of sources, each in a few versions, so
writers collide on the same documents and replace each other's versions) and sometimes
delete one; edge builders rebuild sequence and similarity edges over random documents;
readers run vector, hybrid and graph retrieval and check every result against the
document it claims to come from. Every operation is bounded by the driver's timeouts and
the run stops at the deadline; the only target is the loopback server.

At the end the namespace is checked: no duplicate documents, chunks or edges, no orphan
chunks, no document left with a pending hash. ``--json OUT`` writes the whole report.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgrag_neo4j import ids
from kgrag_neo4j.ingestion.chunkers import RecursiveChunker
from kgrag_neo4j.ingestion.ingestor import Ingestor
from kgrag_neo4j.options import IngestGraphOptions
from kgrag_neo4j.providers.hashing import HashingEmbedder
from kgrag_neo4j.retrieval.retrievers import GraphRetriever, HybridRetriever, VectorRetriever
from kgrag_neo4j.store import Neo4jStore
from kgrag_neo4j.types import PENDING_HASH_SUFFIX

__all__ = ["StressReport", "add_arguments", "main", "run", "run_stress", "stress_text"]

VERSIONS = 3
_WORDS = "river mill bridge harbour railway station museum court school island treaty album".split()

# Read-only checks of what the run left behind (static text, parameters only).
_CHECKS = {
    "duplicate_documents": "MATCH (d:Document {namespace: $ns}) WITH d.source AS k, count(*) AS n WHERE n > 1 RETURN count(*) AS n",
    "duplicate_chunk_positions": (
        "MATCH (d:Document {namespace: $ns})-[:HAS_CHUNK]->(c:Chunk) "
        "WITH d, c.chunk_index AS i, c.parent_id AS p, count(c) AS n WHERE n > 1 RETURN count(*) AS n"
    ),
    "duplicate_edges": (
        "MATCH (s:Chunk {namespace: $ns})-[r:RELATES_TO]->(t) "
        "WITH s, t, r.relation AS rel, count(r) AS n WHERE n > 1 RETURN count(*) AS n"
    ),
    "orphan_chunks": "MATCH (c:Chunk {namespace: $ns}) WHERE NOT EXISTS { (:Document)-[:HAS_CHUNK]->(c) } RETURN count(c) AS n",
    "pending_documents": ("MATCH (d:Document {namespace: $ns}) WHERE d.content_hash ENDS WITH $pending RETURN count(d) AS n"),
    "mixed_version_documents": (
        "MATCH (d:Document {namespace: $ns})-[:HAS_CHUNK]->(c:Chunk) "
        "WITH d, c WHERE NOT c.content CONTAINS d.title RETURN count(DISTINCT d) AS n"
    ),
}


def stress_text(doc: int, version: int, *, paragraphs: int = 5) -> tuple[str, str]:
    """(title, text) of one version of one document; every paragraph carries the title, so
    every chunk says which document version it belongs to."""
    title = f"doc{doc} v{version}"
    rng = random.Random(doc * 100 + version)
    body = []
    for p in range(paragraphs):
        words = " ".join(rng.choice(_WORDS) for _ in range(24))
        body.append(f"{title} paragraph {p}: {words}.")
    return title, "\n\n".join(body)


@dataclass
class OpStats:
    count: int = 0
    errors: int = 0
    durations: list[float] = field(default_factory=list)
    error_kinds: dict[str, int] = field(default_factory=dict)

    def row(self, name: str) -> list[Any]:
        from .common import stats_ms

        s = stats_ms(self.durations)
        return [name, self.count, self.errors, s.get("p50"), s.get("p95"), s.get("max")]


@dataclass
class StressReport:
    seconds: float
    config: dict[str, Any]
    ops: dict[str, OpStats]
    results_checked: int = 0
    half_written: int = 0
    half_written_examples: list[str] = field(default_factory=list)
    checks: dict[str, int] = field(default_factory=dict)
    errors_sample: list[str] = field(default_factory=list)
    #: transactions the driver retried (deadlocks and other transient errors): not errors,
    #: since the caller never saw them
    driver_retries: int = 0

    @property
    def operations(self) -> int:
        return sum(s.count for s in self.ops.values())

    @property
    def errors(self) -> int:
        return sum(s.errors for s in self.ops.values())

    def rows(self) -> list[list[Any]]:
        from .common import stats_ms

        rows = [s.row(name) for name, s in sorted(self.ops.items())]
        every = [d for s in self.ops.values() for d in s.durations]
        total = stats_ms(every)
        rows.append(["all", self.operations, self.errors, total.get("p50"), total.get("p95"), total.get("max")])
        return rows

    def as_dict(self) -> dict[str, Any]:
        from .common import stats_ms

        return {
            "seconds": round(self.seconds, 2),
            "config": self.config,
            "operations": self.operations,
            "errors": self.errors,
            "ops_per_second": round(self.operations / self.seconds, 2) if self.seconds else None,
            "latency_ms": stats_ms([d for s in self.ops.values() for d in s.durations]),
            "by_operation": {
                name: {"count": s.count, "errors": s.errors, "error_kinds": s.error_kinds, "latency_ms": stats_ms(s.durations)}
                for name, s in sorted(self.ops.items())
            },
            "driver_retries": self.driver_retries,
            "results_checked": self.results_checked,
            "half_written": self.half_written,
            "half_written_examples": self.half_written_examples,
            "checks": self.checks,
            "errors_sample": self.errors_sample,
        }

    @property
    def clean(self) -> bool:
        return self.errors == 0 and self.half_written == 0 and not any(self.checks.values())


class _Recorder:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.ops: dict[str, OpStats] = {}
        self.errors_sample: list[str] = []
        self.results_checked = 0
        self.half_written: list[str] = []

    def timed(self, name: str, fn: Callable[[], Any]) -> Any:
        started = time.perf_counter()
        try:
            out = fn()
        except Exception as exc:  # every error is counted and shown, none stops the run
            elapsed = time.perf_counter() - started
            with self.lock:
                s = self.ops.setdefault(name, OpStats())
                s.count += 1
                s.errors += 1
                s.durations.append(elapsed)
                kind = type(exc).__name__
                s.error_kinds[kind] = s.error_kinds.get(kind, 0) + 1
                if len(self.errors_sample) < 10:
                    self.errors_sample.append(f"{name}: {kind}: {exc}"[:400])
            return None
        elapsed = time.perf_counter() - started
        with self.lock:
            s = self.ops.setdefault(name, OpStats())
            s.count += 1
            s.durations.append(elapsed)
        return out


def run_stress(
    store: Neo4jStore,
    embedder: Any = None,
    *,
    seconds: float = 60.0,
    writers: int = 3,
    edge_builders: int = 1,
    readers: int = 3,
    documents: int = 12,
    delete_share: float = 0.05,
    seed: int = 7,
) -> StressReport:
    """Run the mixed workload on ``store``'s namespace for ``seconds`` and check the result."""
    embedder = embedder or HashingEmbedder(dimensions=256)
    chunker = RecursiveChunker(max_tokens=60, overlap_tokens=0)
    ingest_graph = IngestGraphOptions(sequence_edges=True, similarity_edges=True, similarity_threshold=0.5, similarity_top_k=3)
    namespace = store.namespace
    source_of = {d: f"stress/doc-{d}.txt" for d in range(documents)}
    doc_id_of = {d: ids.document_id(namespace, s) for d, s in source_of.items()}
    _warm_up(store, embedder, chunker, ingest_graph, source_of[0])
    rec = _Recorder()
    retries = _RetryCounter()
    logging.getLogger("neo4j").addHandler(retries)
    deadline = time.monotonic() + seconds
    stop = threading.Event()

    def writer(n: int) -> None:
        rng = random.Random(seed * 1000 + n)
        ingestor = Ingestor(store, embedder, chunker=chunker, graph=ingest_graph)
        while not stop.is_set() and time.monotonic() < deadline:
            d = rng.randrange(documents)
            if rng.random() < delete_share:
                rec.timed("delete", lambda: store.delete_document(doc_id_of[d]))
                continue
            title, text = stress_text(d, rng.randrange(VERSIONS))
            rec.timed("ingest", lambda: ingestor.ingest_text(text, source_of[d], title))

    def edge_builder(n: int) -> None:
        rng = random.Random(seed * 2000 + n)
        ingestor = Ingestor(
            store, embedder, graph=IngestGraphOptions(sequence_edges=True, similarity_edges=True, similarity_threshold=0.5)
        )
        while not stop.is_set() and time.monotonic() < deadline:
            picked = [doc_id_of[d] for d in rng.sample(range(documents), k=min(3, documents))]
            rec.timed("build_edges", lambda: ingestor.build_edges(picked))

    def reader(n: int) -> None:
        rng = random.Random(seed * 3000 + n)
        retrievers = {
            "retrieve_vector": VectorRetriever(store, embedder),
            "retrieve_hybrid": HybridRetriever(store, embedder),
            "retrieve_graph": GraphRetriever(store, embedder),
        }
        names = sorted(retrievers)
        while not stop.is_set() and time.monotonic() < deadline:
            name = rng.choice(names)
            d, v = rng.randrange(documents), rng.randrange(VERSIONS)
            query = f"doc{d} v{v} " + " ".join(rng.choice(_WORDS) for _ in range(3))
            results = rec.timed(name, lambda: retrievers[name].retrieve(query, 5))
            for r in results or ():
                _check_result(rec, r, doc_id_of, via=name)

    threads = [threading.Thread(target=_guard(writer, i, rec), name=f"stress-writer-{i}") for i in range(writers)]
    threads += [threading.Thread(target=_guard(edge_builder, i, rec), name=f"stress-edges-{i}") for i in range(edge_builders)]
    threads += [threading.Thread(target=_guard(reader, i, rec), name=f"stress-reader-{i}") for i in range(readers)]
    started = time.monotonic()
    for t in threads:
        t.start()
    try:
        for t in threads:
            # an operation in flight at the deadline is bounded by the driver's timeouts
            t.join(max(0.0, deadline - time.monotonic()) + 120)
    finally:
        stop.set()
        for t in threads:
            t.join(60)
    elapsed = time.monotonic() - started
    logging.getLogger("neo4j").removeHandler(retries)
    report = StressReport(
        seconds=elapsed,
        config={
            "seconds": seconds,
            "writers": writers,
            "edge_builders": edge_builders,
            "readers": readers,
            "documents": documents,
            "versions": VERSIONS,
            "delete_share": delete_share,
            "namespace": namespace,
        },
        ops=rec.ops,
        results_checked=rec.results_checked,
        half_written=len(rec.half_written),
        half_written_examples=rec.half_written[:5],
        errors_sample=rec.errors_sample,
        driver_retries=retries.count,
    )
    report.checks = namespace_checks(store)
    stuck = [t.name for t in threads if t.is_alive()]
    if stuck:
        report.checks["threads_still_running"] = len(stuck)
    return report


class _RetryCounter(logging.Handler):
    """Counts the driver's "will be retried" warnings (deadlocks, other transient errors)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if "will be retried" in record.getMessage():
            self.count += 1


def _warm_up(store: Neo4jStore, embedder: Any, chunker: Any, graph: IngestGraphOptions, source: str) -> None:
    """Schema, then one untimed run of each operation, so the figures are not those of a
    cold server planning its first queries."""
    ingestor = Ingestor(store, embedder, chunker=chunker, graph=graph)
    title, text = stress_text(0, 0)
    result = ingestor.ingest_text(text, source, title)
    ingestor.build_edges([result.document_id])
    for retriever in (VectorRetriever, HybridRetriever, GraphRetriever):
        retriever(store, embedder).retrieve(title, 5)


def _guard(fn: Callable[[int], None], n: int, rec: _Recorder) -> Callable[[], None]:
    def run() -> None:
        try:
            fn(n)
        except Exception:  # a bug in the loop itself: record it rather than die silently
            with rec.lock:
                s = rec.ops.setdefault("worker_crash", OpStats())
                s.count += 1
                s.errors += 1
                rec.errors_sample.append(traceback.format_exc(limit=3)[-400:])

    return run


def _check_result(rec: _Recorder, r: Any, doc_id_of: dict[int, str], *, via: str = "") -> None:
    """A result must come from a whole document of the version its chunk says."""
    problem = None
    marker = r.content.split(" paragraph ", 1)[0]  # "docN vK"
    try:
        d = int(marker.split()[0][3:])
    except (ValueError, IndexError):
        problem = f"chunk {r.id} has no document marker"
    else:
        if r.document_id != doc_id_of.get(d):
            problem = f"chunk {r.id} of {marker!r} claims document {r.document_id}"
        elif not r.title:
            problem = f"chunk {r.id} of {marker!r} has no document"
        elif r.title != marker:
            problem = f"chunk {r.id} of {marker!r} returned with document title {r.title!r}"
    with rec.lock:
        rec.results_checked += 1
        if problem:
            rec.half_written.append(f"{via}: {problem}" if via else problem)


def namespace_checks(store: Neo4jStore) -> dict[str, int]:
    out = {}
    for name, query in _CHECKS.items():
        params = {"ns": store.namespace}
        if "$pending" in query:
            params["pending"] = PENDING_HASH_SUFFIX
        records, _, _ = store.driver.execute_query(query, params, database_=store.database)
        out[name] = int(records[0]["n"])
    return out


def print_report(report: StressReport) -> None:
    from .common import print_table

    print_table(
        f"stress: {report.seconds:.1f}s, {report.operations} operations, {report.errors} errors",
        ["operation", "count", "errors", "p50 ms", "p95 ms", "max ms"],
        report.rows(),
    )
    print_table(
        "consistency",
        ["check", "value"],
        [
            ["transactions retried by the driver", report.driver_retries],
            ["results checked", report.results_checked],
            ["half-written results", report.half_written],
        ]
        + [[k.replace("_", " "), v] for k, v in report.checks.items()],
    )
    for line in report.errors_sample:
        print(f"  error: {line}")
    for line in report.half_written_examples:
        print(f"  half-written: {line}")
    print(f"\n  {'CLEAN' if report.clean else 'PROBLEMS FOUND'}")
    sys.stdout.flush()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The stress options (``python -m bench stress`` adds ``--json OUT`` itself)."""
    parser.add_argument("--seconds", type=float, default=60.0, help="stress: how long to run (default 60)")
    parser.add_argument("--writers", type=int, default=3, help="stress: ingesting threads (default 3)")
    parser.add_argument("--edge-builders", type=int, default=1, help="stress: edge-building threads (default 1)")
    parser.add_argument("--readers", type=int, default=3, help="stress: retrieving threads (default 3)")
    parser.add_argument("--documents", type=int, default=12, help="stress: size of the shared document pool (default 12)")
    parser.add_argument("--uri", help="stress: use this server (NEO4J_USERNAME / NEO4J_PASSWORD) instead of a fresh local one")


def run(args: argparse.Namespace) -> StressReport:
    """Run the stress benchmark; exit status 1 (SystemExit) when it found a problem."""
    if not 0 < args.seconds <= 3600:
        raise SystemExit("--seconds must be in (0, 3600]")
    json_out = getattr(args, "json", None)

    def go(store: Neo4jStore, neo4j_version: str) -> StressReport:
        from .common import print_header

        head = print_header(
            "stress",
            neo4j_version=neo4j_version,
            embedder="hashing-256",
            sizes={"documents": args.documents, "versions": VERSIONS},
            extra={"threads": f"{args.writers} writers, {args.edge_builders} edge builders, {args.readers} readers"},
        )
        report = run_stress(
            store,
            seconds=args.seconds,
            writers=args.writers,
            edge_builders=args.edge_builders,
            readers=args.readers,
            documents=args.documents,
        )
        print_report(report)
        if json_out:
            Path(json_out).parent.mkdir(parents=True, exist_ok=True)
            Path(json_out).write_text(json.dumps({**head, **report.as_dict()}, indent=2, default=str))
            print(f"  report -> {json_out}")
        return report

    namespace = f"stress-{int(time.time())}"
    if args.uri:
        from kgrag_neo4j.settings import Neo4jSettings

        with Neo4jStore.connect(Neo4jSettings.from_env(uri=args.uri), namespace=namespace) as store:
            report = go(store, store.verify()["version"])
    else:
        from .common import bench_server

        with bench_server(heap="1g", pagecache="256m") as server:
            report = go(server.store(namespace), server.neo4j_version)
    if not report.clean:
        raise SystemExit(1)
    return report


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m bench.stress``: the same as ``python -m bench stress``."""
    parser = argparse.ArgumentParser(prog="python -m bench.stress", description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", metavar="OUT", help="also write the report as JSON to OUT")
    add_arguments(parser)
    run(parser.parse_args(argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
