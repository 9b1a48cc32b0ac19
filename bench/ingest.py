"""Ingest throughput on real text: kgrag from text (extract, chunk, embed, store) against
what the database and the peers write from precomputed chunks and vectors.

The corpus is bench/realtext.py's (the Python manual and the manual pages, one ``.txt``
file per page, 128-token chunks, WordLlama). Systems, side by side on the same server and
schema (so the same index maintenance), each into an emptied database whose chunk indexes
were dropped and created again:

- kgrag from text: ``Ingestor.ingest_paths`` over the folder: read, chunk, embed (WordLlama),
  write documents with their chunks (``store_documents``), the next batch embedded while the
  current one is written. Nothing is precomputed.
- kgrag ``store_documents`` with the chunks and vectors precomputed: the store alone.
- the raw ``UNWIND ... CREATE`` of the same chunk rows, 250 and 1,000 per transaction (the
  faster of the two is the ceiling): chunk nodes only, no document, no link, no check; its
  rows handed to the driver as kgrag hands them (``store.runner.log_safe``), so the ceiling
  does not pay the driver's debug formatting of every parameter (43 ms per 250 rows); and
  the same with two transactions at once, as kgrag from text writes (reported beside the
  ceiling, not as it: the database runs each transaction's statement on one thread);
- neo4j-graphrag ``Neo4jWriter``: chunk nodes only in runs of 1,000 (the most it can be
  spared), and the lexical graph its pipeline writes for documents (Document and Chunk nodes,
  FROM_DOCUMENT and NEXT_CHUNK relationships), one run per document as its pipeline does;
- langchain-neo4j ``add_embeddings`` (chunk nodes, its transactions of 1,000).

Building the Python inputs of the precomputed systems (row dicts, float lists) is not
timed. Two rounds, the second in reverse order, after a warm-up write by every system and
one full-size load by the raw statement (the server's first load of a size costs it up to
twice the CPU of the later ones: its compiled code and its store files are not ready yet, so
without it the first system of round 1 runs on a colder server than the others); each
system's faster round counts. Then ``store_edges`` (the corpus's similar_to edges) in edges
per second.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from kgrag_neo4j.ids import content_hash
from kgrag_neo4j.store import Neo4jStore
from kgrag_neo4j.store.runner import log_safe
from kgrag_neo4j.types import Chunk, ChunkEdge, Document, RelationType

from . import peers
from .common import (
    BenchServer,
    add_version_argument,
    bench_cypher,
    bench_server,
    clear_database,
    load_average,
    print_header,
    print_table,
    result_name,
    write_results,
)
from .realtext import RealText, chunk_id, chunker, corpus_files, load_realtext, similar_pairs

__all__ = ["add_arguments", "run"]

QUICK_SIZES = [10_000]
FULL_SIZES = [100_000]
BATCH = 1_000  # rows per call of the peers (their own batch size)
ROUNDS = 2
WARMUP_CHUNKS = 2_000
#: full-size loads by the raw statement before the timed rounds (bench/NOTES.md, 2026-11-24
#: 08:30: 100k chunks cost a fresh server 69-92 CPU-s, later loads 33-44)
WARMUP_FULL_LOADS = 1
EMBEDDER = "wordllama-l2_supercat-256"
FROM_TEXT = "kgrag from text (Ingestor.ingest_paths: read, chunk, embed, store)"
RAW_250 = "raw UNWIND ... CREATE, 250 rows per tx"
RAW_1000 = "raw UNWIND ... CREATE, 1,000 rows per tx"
RAW_TWO = "raw UNWIND ... CREATE, 1,000 rows per tx, two writers at once"
GRAPHRAG_CHUNKS = "neo4j-graphrag Neo4jWriter, chunk nodes, runs of 1,000"
GRAPHRAG_LEXICAL = "neo4j-graphrag Neo4jWriter, its lexical graph, one run per document"


def add_arguments(p: argparse.ArgumentParser) -> None:
    try:
        p.add_argument("--no-peers", action="store_true", help="skip neo4j-graphrag and langchain-neo4j")
    except argparse.ArgumentError:  # the suites' parser has it from the latency benchmark
        pass
    add_version_argument(p)


def _reset(srv: BenchServer, dims: int) -> Neo4jStore:
    clear_database(srv.driver, drop_vector_indexes=True)
    store = srv.store()
    store.init_schema(dims, model=EMBEDDER)
    return store


_ROWS: dict[int, list[dict[str, Any]]] = {}


def _rows(corpus: RealText) -> list[dict[str, Any]]:
    """The chunk rows the raw statement and the peers write: kgrag's chunk properties (built
    once per corpus: 100k of them hold 25 million floats)."""
    if corpus.n in _ROWS:
        return _ROWS[corpus.n]
    created = int(time.time())
    rows = []
    pos = 0
    for d, (name, k) in enumerate(zip(corpus.files, corpus.doc_chunks)):
        for j in range(k):
            i = pos + j
            rows.append(
                {
                    "id": chunk_id(i),
                    "embedding": corpus.vectors[i].astype(float).tolist(),
                    "document_id": f"rtdoc-{d:06d}",
                    "index": j,
                    "props": {
                        "namespace": "bench",
                        "document_id": f"rtdoc-{d:06d}",
                        "content": corpus.texts[i],
                        "chunk_index": j,
                        "token_count": len(corpus.texts[i]) // 4,
                        "metadata": "{}",
                        "meta_pairs": [],
                        "source": name,
                        "created_at": created,
                    },
                }
            )
        pos += k
    _ROWS.clear()
    _ROWS[corpus.n] = rows
    return rows


Prepare = Callable[[BenchServer, Neo4jStore, RealText, Path], Callable[[], None]]


def _from_text(srv: BenchServer, store: Neo4jStore, corpus: RealText, root: Path) -> Callable[[], None]:
    from kgrag_neo4j.ingestion.ingestor import Ingestor
    from kgrag_neo4j.providers import WordLlamaEmbedder

    folder = corpus_files(corpus, root / f"text-{corpus.n}")
    paths = sorted(folder.iterdir())
    embedder = WordLlamaEmbedder().load()  # loading the model is not ingest time
    chunker()  # nor importing the splitter

    def write() -> None:
        results = Ingestor(store, embedder, chunker=chunker()).ingest_paths(paths)
        failed = [r for r in results if r.status == "failed"]
        if failed:
            raise RuntimeError(f"{len(failed)} files failed, first: {failed[0].path}: {failed[0].error}")

    return write


def _store_documents(srv: BenchServer, store: Neo4jStore, corpus: RealText, root: Path) -> Callable[[], None]:
    items = []
    pos = 0
    for d, (name, k) in enumerate(zip(corpus.files, corpus.doc_chunks)):
        doc_id = f"rtdoc-{d:06d}"
        chunks = [
            Chunk(
                id=chunk_id(pos + j),
                document_id=doc_id,
                content=corpus.texts[pos + j],
                chunk_index=j,
                embedding=corpus.vectors[pos + j].astype(float).tolist(),
                token_count=len(corpus.texts[pos + j]) // 4,
            )
            for j in range(k)
        ]
        items.append((Document(id=doc_id, source=name, title=name, content="", content_hash=content_hash(name)), chunks))
        pos += k

    def write() -> None:
        batch, size = [], 0
        for item in items:
            batch.append(item)
            size += len(item[1])
            if size >= 1_000:
                store.store_documents(batch)
                batch, size = [], 0
        if batch:
            store.store_documents(batch)

    return write


def _raw(rows_per_tx: int, writers: int = 1) -> Prepare:
    def prepare(srv: BenchServer, store: Neo4jStore, corpus: RealText, root: Path) -> Callable[[], None]:
        rows = [{"id": r["id"], "embedding": r["embedding"], "props": r["props"]} for r in _rows(corpus)]
        statement = bench_cypher("raw_create_chunks")

        def write_from(starts: range) -> None:
            with srv.driver.session(database=srv.settings.database) as s:
                for start in starts:
                    s.execute_write(lambda tx: tx.run(statement, log_safe({"rows": rows[start : start + rows_per_tx]})).consume())

        def write() -> None:
            if writers == 1:
                write_from(range(0, len(rows), rows_per_tx))
                return
            with ThreadPoolExecutor(max_workers=writers) as pool:
                # each writer takes every writers-th transaction
                for f in [
                    pool.submit(write_from, range(k * rows_per_tx, len(rows), writers * rows_per_tx)) for k in range(writers)
                ]:
                    f.result()

        return write

    return prepare


def _graphrag_chunks(srv: BenchServer, store: Neo4jStore, corpus: RealText, root: Path) -> Callable[[], None]:
    rows = _rows(corpus)
    write_batch = peers.graphrag_writer(srv)

    def write() -> None:
        for start in range(0, len(rows), BATCH):
            write_batch(rows[start : start + BATCH])

    return write


def _graphrag_lexical(srv: BenchServer, store: Neo4jStore, corpus: RealText, root: Path) -> Callable[[], None]:
    try:
        from neo4j_graphrag.components.kg_writer import Neo4jWriter
        from neo4j_graphrag.components.types import Neo4jGraph, Neo4jNode, Neo4jRelationship
    except ImportError as exc:
        raise peers.PeerUnavailable(f"neo4j-graphrag is not installed: {exc}") from None
    peers._quiet()
    with srv.driver.session(database=srv.settings.database) as s:
        apoc = s.run("SHOW PROCEDURES YIELD name WHERE name = 'apoc.merge.relationship' RETURN count(*) AS n").single()["n"]
    if not apoc:
        # its relationship writer calls apoc.merge.relationship (the Docker image of
        # docker/compose.yml has APOC; the local jars do not)
        raise peers.PeerUnavailable("neo4j-graphrag writes relationships with APOC, which this server lacks")
    writer = Neo4jWriter(srv.driver, neo4j_database=srv.settings.database)
    rows = _rows(corpus)
    graphs = []
    pos = 0
    for d, (name, k) in enumerate(zip(corpus.files, corpus.doc_chunks)):
        doc_id = f"rtdoc-{d:06d}"
        nodes = [Neo4jNode(id=doc_id, label="Document", properties={"id": doc_id, "path": name, "namespace": "bench"})]
        rels = []
        for j in range(k):
            r = rows[pos + j]
            nodes.append(
                Neo4jNode(
                    id=r["id"],
                    label="Chunk",
                    properties={"id": r["id"], **r["props"]},
                    embedding_properties={"embedding": r["embedding"]},
                )
            )
            rels.append(Neo4jRelationship(start_node_id=r["id"], end_node_id=doc_id, type="FROM_DOCUMENT"))
            if j + 1 < k:
                rels.append(Neo4jRelationship(start_node_id=r["id"], end_node_id=rows[pos + j + 1]["id"], type="NEXT_CHUNK"))
        graphs.append(Neo4jGraph(nodes=nodes, relationships=rels))
        pos += k

    async def write_all() -> None:
        for graph in graphs:
            result = await writer.run(graph)
            if result.status != "SUCCESS":
                raise RuntimeError(f"neo4j-graphrag writer failed: {result.metadata}")

    return lambda: asyncio.run(write_all())


def _langchain(srv: BenchServer, store: Neo4jStore, corpus: RealText, root: Path) -> Callable[[], None]:
    rows = _rows(corpus)
    write_batch = peers.langchain_writer(srv, dimensions=corpus.vectors.shape[1])

    def write() -> None:
        for start in range(0, len(rows), BATCH):
            write_batch(rows[start : start + BATCH])

    return write


SYSTEMS: list[tuple[str, str, Prepare, bool]] = [
    (
        FROM_TEXT,
        "files -> chunks -> WordLlama -> Document + Chunk + HAS_CHUNK, ~2,000 chunks per transaction, two at once",
        _from_text,
        False,
    ),
    (
        "kgrag store_documents (precomputed)",
        "Document + Chunk + HAS_CHUNK, calls of ~1,000 chunks, one transaction each",
        _store_documents,
        False,
    ),
    (RAW_250, "chunk nodes, 250 per transaction", _raw(250), False),
    (RAW_1000, "chunk nodes, 1,000 per transaction", _raw(1_000), False),
    (RAW_TWO, "chunk nodes, 1,000 per transaction, two transactions at once (as kgrag from text writes)", _raw(1_000, 2), False),
    (GRAPHRAG_CHUNKS, "chunk nodes, 1,000 per run()", _graphrag_chunks, True),
    (GRAPHRAG_LEXICAL, "Document + Chunk + FROM_DOCUMENT + NEXT_CHUNK, one run() per document", _graphrag_lexical, True),
    ("langchain-neo4j add_embeddings", "chunk nodes, its transactions of 1,000", _langchain, True),
]


def _count_chunks(srv: BenchServer) -> int:
    with srv.driver.session(database=srv.settings.database) as s:
        return s.run("MATCH (c:Chunk) WHERE c.embedding IS NOT NULL RETURN count(c) AS n").single()["n"]


def one_size(size: int, args: argparse.Namespace, root: Path) -> dict[str, Any]:
    heap, pagecache = ("4g", "2g") if size > 50_000 else ("2g", "1g")
    corpus = load_realtext(size)
    warm = load_realtext(WARMUP_CHUNKS)
    dims = corpus.vectors.shape[1]
    out: dict[str, Any] = {"size": corpus.n, "documents": len(corpus.files), "systems": {}}
    systems = [s for s in SYSTEMS if not (args.no_peers and s[3])]
    with bench_server(heap=heap, pagecache=pagecache, version=args.neo4j_version) as srv:
        out["neo4j"] = srv.neo4j_version
        out["warmup_full_loads"] = WARMUP_FULL_LOADS
        print(f"    warming up every system on {warm.n:,} chunks", flush=True)
        for label, _note, prepare, _peer in systems:
            try:
                store = _reset(srv, dims)
                prepare(srv, store, warm, root)()
            except peers.PeerUnavailable as exc:
                print(f"    {label}: skipped ({exc})")
        for _ in range(WARMUP_FULL_LOADS):
            store = _reset(srv, dims)
            cpu, t0 = srv.cpu_seconds(), time.perf_counter()
            _raw(1_000)(srv, store, corpus, root)()
            after = srv.cpu_seconds()
            spent = f"{after - cpu:.1f}" if cpu is not None and after is not None else "?"
            print(
                f"    warm-up: the raw statement loaded {corpus.n:,} chunks in {time.perf_counter() - t0:.1f}s "
                f"(server CPU {spent}s; not counted)",
                flush=True,
            )
        for round_no in range(ROUNDS):
            order = systems if round_no % 2 == 0 else systems[::-1]
            print(f"    round {round_no + 1} of {ROUNDS}" + (" (reverse order)" if round_no % 2 else ""), flush=True)
            for label, note, prepare, _peer in order:
                try:
                    store = _reset(srv, dims)
                    write = prepare(srv, store, corpus, root)
                except peers.PeerUnavailable:
                    continue
                load, cpu = load_average(), srv.cpu_seconds()
                t0 = time.perf_counter()
                write()
                seconds = time.perf_counter() - t0
                server_cpu = round(srv.cpu_seconds() - cpu, 1) if cpu is not None else None
                del write
                written = _count_chunks(srv)
                rate = written / seconds
                print(
                    f"    {label}: {written:,} chunks in {seconds:.1f}s = {rate:,.0f}/s (server CPU {server_cpu}s; load {load})",
                    flush=True,
                )
                best = out["systems"].get(label)
                rounds = (best or {}).get("rounds_per_s", []) + [round(rate, 1)]
                if best is None or rate > best["chunks_per_s"]:
                    best = {
                        "seconds": round(seconds, 2),
                        "chunks": written,
                        "chunks_per_s": round(rate, 1),
                        "note": note,
                        "server_cpu_seconds": server_cpu,
                        "load_before": load,
                    }
                best["rounds_per_s"] = rounds
                out["systems"][label] = best
                if label == "kgrag store_documents (precomputed)" and round_no == 0:
                    edges = [
                        ChunkEdge(chunk_id(i), chunk_id(j), RelationType.SIMILAR_TO, min(1.0, c), origin="similarity")
                        for i, j, c in similar_pairs(corpus)
                    ]
                    t0 = time.perf_counter()
                    stored = sum(store.store_edges(edges[k : k + 10_000]) for k in range(0, len(edges), 10_000))
                    secs = time.perf_counter() - t0
                    out["edges"] = {
                        "edges": stored,
                        "seconds": round(secs, 2),
                        "edges_per_s": round(stored / secs, 1),
                        "note": "store_edges, the corpus's similar_to edges (5 nearest, cosine >= 0.6), 10,000 per call",
                    }
                    print(f"    kgrag store_edges: {stored:,} edges in {secs:.1f}s = {stored / secs:,.0f}/s", flush=True)
        out["systems"] = {label: out["systems"][label] for label, *_ in SYSTEMS if label in out["systems"]}
    # the ceiling: the raw statement at its faster transaction size in this run (250 rows was
    # the fastest on synthetic 384-dim vectors; on this corpus 1,000 may be), one writer as a
    # plain script writes it and as the issue measured it; the same with two writers is
    # reported beside it (from_text_x_two_writers), not taken as the ceiling
    out["ceiling"] = max((RAW_250, RAW_1000), key=lambda k: out["systems"][k]["chunks_per_s"])
    ceiling = out["systems"][out["ceiling"]]["chunks_per_s"]
    for s in out["systems"].values():
        s["share_of_ceiling"] = round(s["chunks_per_s"] / ceiling, 3)
    ours = out["systems"].get(FROM_TEXT)
    if ours:
        out["from_text_x_ceiling"] = ours["share_of_ceiling"]
        for key, label in (
            ("from_text_x_graphrag_chunks", GRAPHRAG_CHUNKS),
            ("from_text_x_graphrag_lexical", GRAPHRAG_LEXICAL),
            ("from_text_x_two_writers", RAW_TWO),
        ):
            if label in out["systems"]:
                out[key] = round(ours["chunks_per_s"] / out["systems"][label]["chunks_per_s"], 3)
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    sizes = args.sizes or (QUICK_SIZES if args.quick else FULL_SIZES)
    head = print_header(
        "ingest",
        neo4j_version="(per size, fresh server)",
        embedder="WordLlama: run by kgrag from text; computed beforehand for the precomputed systems",
        sizes=sizes,
        extra={
            "corpus": "real text: the Python 3.11 manual and the manual pages (bench/realtext.py), one file per page, 128-token chunks",
            "schema": "kgrag's (id constraint, namespace/document indexes, full-text, vector 256 cosine) for every system",
        },
    )
    results: dict[str, Any] = {**head, "runs": []}
    root = Path(tempfile.mkdtemp(prefix="kgrag-bench-ingest-"))
    try:
        for size in sizes:
            print(f"\n  [{size:,} chunks of real text]", flush=True)
            r = one_size(size, args, root)
            results["neo4j"] = r["neo4j"]
            results["runs"].append(r)
            rows = [
                [name, s["chunks"], s["seconds"], s["chunks_per_s"], s["share_of_ceiling"], s["server_cpu_seconds"]]
                for name, s in r["systems"].items()
            ]
            if "edges" in r:
                rows.append(
                    [
                        "kgrag store_edges (edges)",
                        r["edges"]["edges"],
                        r["edges"]["seconds"],
                        r["edges"]["edges_per_s"],
                        None,
                        None,
                    ]
                )
            print_table(
                f"Ingest of {r['size']:,} chunks of real text ({r['documents']:,} documents); faster of {ROUNDS} rounds",
                ["system", "chunks", "seconds", "chunks/s", "x ceiling", "server CPU s"],
                rows,
            )
            if "from_text_x_ceiling" in r:
                print(
                    f"  kgrag from text: {r['from_text_x_ceiling']:.2f}x the ceiling"
                    + (
                        f" ({r['from_text_x_two_writers']:.2f}x the raw statement with two writers)"
                        if "from_text_x_two_writers" in r
                        else ""
                    )
                    + (
                        f", {r['from_text_x_graphrag_chunks']:.2f}x neo4j-graphrag (chunk nodes)"
                        if "from_text_x_graphrag_chunks" in r
                        else ""
                    )
                    + (
                        f", {r['from_text_x_graphrag_lexical']:.2f}x neo4j-graphrag (its lexical graph)"
                        if "from_text_x_graphrag_lexical" in r
                        else ""
                    )
                )
            write_results(result_name("ingest", args), results, args.json)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    write_results(result_name("ingest", args), results, args.json)
    return results
