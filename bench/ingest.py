"""Ingest throughput: chunks per second into Neo4j with precomputed embeddings, for kgrag's
``store_document`` and, side by side on the same schema (so the same index maintenance), a
raw ``UNWIND ... CREATE`` (the ceiling), neo4j-graphrag's ``Neo4jWriter`` and langchain-neo4j's
``add_embeddings``. Then edges per second for ``store_edges`` and the whole ingest of the
MuSiQue corpus from text with the hashing and the WordLlama embedders.

Each system writes into an emptied database whose chunk indexes were dropped and created
again. Building the Python inputs (Chunk objects, row dicts, float lists) is not timed.

Two rounds, the second in reverse order, and each system's faster round is reported: on an
idle machine the first system of a single pass paid the JVM's warm-up (kgrag first: 0.75x
the raw statement; last: 0.96x). Transaction size matters more than any library here (raw
``UNWIND ... CREATE``: 1,063/s at 5,000 rows per transaction, 2,746/s at 250), so the raw
statement runs at both: at 5,000 rows (one transaction per 5,000-chunk document, as kgrag
writes that corpus) and at 250 rows, its fastest, which is the ceiling.
"""

from __future__ import annotations

import argparse
import time
from typing import Any, Callable, Sequence

from kgrag_neo4j.store import Neo4jStore

from . import peers
from .common import (BenchServer, bench_cypher, bench_server, clear_database, print_header, print_table, result_name,
                     write_results)
from .synthetic import DIMENSIONS, SyntheticCorpus, store_random_edges

__all__ = ["add_arguments", "run"]

QUICK_SIZES = [5_000]
FULL_SIZES = [20_000, 100_000]
BATCH = 5_000  # rows per call for every system (kgrag: chunks per document)
SMALL_DOC = 50  # kgrag with realistic documents: one transaction per 50 chunks
CEILING_ROWS = 250  # the raw statement's fastest transaction size of 250 / 1,000 / 5,000 (bench/NOTES.md)
ROUNDS = 2  # the second in reverse order; the faster round counts
CEILING = f"raw UNWIND ... CREATE, {CEILING_ROWS} rows per tx (ceiling)"
MUSIQUE_QUICK = 500  # paragraphs of the MuSiQue-from-text ingest in the quick suite


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--skip-musique", action="store_true", help="skip the MuSiQue-from-text ingest")


def _reset(srv: BenchServer, dims: int) -> Neo4jStore:
    clear_database(srv.driver, drop_vector_indexes=True)
    store = srv.store()
    store.init_schema(dims, model="synthetic-384" if dims == DIMENSIONS else "unknown")
    return store


def _rows(corpus: SyntheticCorpus) -> list[dict[str, Any]]:
    """The chunk rows the raw statement and the peers write: kgrag's chunk properties."""
    rows = []
    created = int(time.time())
    for start in range(0, corpus.n, BATCH):
        vecs = corpus.vectors(start, min(corpus.n, start + BATCH))
        for i in range(start, start + len(vecs)):
            rows.append({
                "id": f"c{i:07d}",
                "embedding": vecs[i - start].astype(float).tolist(),
                "props": {"namespace": "bench", "document_id": f"doc_{i // BATCH:05d}", "content": corpus.text(i),
                          "chunk_index": i % BATCH, "token_count": 40, "metadata": "{}", "meta_pairs": [],
                          "source": f"synthetic/doc_{i // BATCH:05d}", "created_at": created},
            })
    return rows


Prepare = Callable[[BenchServer, Neo4jStore, SyntheticCorpus], Callable[[], None]]


def _kgrag(doc_size: int) -> Prepare:
    def prepare(srv: BenchServer, store: Neo4jStore, corpus: SyntheticCorpus) -> Callable[[], None]:
        docs = list(SyntheticCorpus(corpus.n, doc_size=doc_size, seed=corpus.seed).documents())

        def write() -> None:
            for doc, chunks in docs:
                store.store_document(doc, chunks)

        return write

    return prepare


def _batched(make_writer: Callable[[BenchServer], Callable[[Sequence[dict]], None]], rows_per_call: int = BATCH) -> Prepare:
    def prepare(srv: BenchServer, store: Neo4jStore, corpus: SyntheticCorpus) -> Callable[[], None]:
        rows = _rows(corpus)
        write_batch = make_writer(srv)

        def write() -> None:
            for start in range(0, len(rows), rows_per_call):
                write_batch(rows[start:start + rows_per_call])

        return write

    return prepare


def _raw_writer(srv: BenchServer) -> Callable[[Sequence[dict]], None]:
    statement = bench_cypher("raw_create_chunks")

    def write(rows: Sequence[dict]) -> None:
        with srv.driver.session(database=srv.settings.database) as s:
            s.execute_write(lambda tx: tx.run(statement, rows=list(rows)).consume())

    return write


SYSTEMS: list[tuple[str, str, Prepare]] = [
    ("kgrag store_document", f"documents of {BATCH} chunks, one transaction each", _kgrag(BATCH)),
    (f"kgrag store_document ({SMALL_DOC}-chunk docs)", f"documents of {SMALL_DOC} chunks, one transaction each", _kgrag(SMALL_DOC)),
    (f"raw UNWIND ... CREATE, {BATCH:,} rows per tx", f"{BATCH} rows per transaction (kgrag's transaction size here)", _batched(_raw_writer)),
    (CEILING, f"{CEILING_ROWS} rows per transaction", _batched(_raw_writer, CEILING_ROWS)),
    ("neo4j-graphrag Neo4jWriter", f"{BATCH} nodes per run(), its batches of 1000", _batched(lambda srv: peers.graphrag_writer(srv))),
    ("langchain-neo4j add_embeddings", f"{BATCH} rows per call, its transactions of 1000",
     _batched(lambda srv: peers.langchain_writer(srv, dimensions=DIMENSIONS))),
]
WARMUP = 500  # chunks each system writes (untimed, then cleared) so no one pays the JIT alone


def _count_chunks(srv: BenchServer) -> int:
    with srv.driver.session(database=srv.settings.database) as s:
        return s.run("MATCH (c:Chunk) WHERE c.embedding IS NOT NULL RETURN count(c) AS n").single()["n"]


def one_size(size: int, args: argparse.Namespace) -> dict[str, Any]:
    heap, pagecache = ("4g", "2g") if size > 50_000 else ("2g", "1g")
    out: dict[str, Any] = {"size": size, "systems": {}}
    corpus = SyntheticCorpus(size, doc_size=BATCH)
    warm = SyntheticCorpus(WARMUP, doc_size=BATCH, seed=7)
    with bench_server(heap=heap, pagecache=pagecache) as srv:
        out["neo4j"] = srv.neo4j_version
        for round_no in range(ROUNDS):
            order = SYSTEMS if round_no % 2 == 0 else SYSTEMS[::-1]
            print(f"    round {round_no + 1} of {ROUNDS}" + (" (reverse order)" if round_no % 2 else ""), flush=True)
            for label, note, prepare in order:
                try:
                    store = _reset(srv, DIMENSIONS)
                    prepare(srv, store, warm)()
                    store = _reset(srv, DIMENSIONS)
                    write = prepare(srv, store, corpus)
                except peers.PeerUnavailable as exc:
                    if round_no == 0:
                        print(f"    {label}: skipped ({exc})")
                    continue
                t0 = time.perf_counter()
                write()
                seconds = time.perf_counter() - t0
                del write
                written = _count_chunks(srv)
                rate = written / seconds
                print(f"    {label}: {written:,} chunks in {seconds:.1f}s = {rate:,.0f}/s", flush=True)
                best = out["systems"].get(label)
                rounds = (best or {}).get("rounds_per_s", []) + [round(rate, 1)]
                if best is None or rate > best["chunks_per_s"]:
                    best = {"seconds": round(seconds, 2), "chunks": written, "chunks_per_s": round(rate, 1), "note": note}
                best["rounds_per_s"] = rounds
                out["systems"][label] = best
                if label == "kgrag store_document" and round_no == 0:
                    edges, secs = store_random_edges(store, size, doc_size=BATCH, progress=False)
                    out["edges"] = {"edges": edges, "seconds": round(secs, 2), "edges_per_s": round(edges / secs, 1),
                                    "note": "store_edges, 5 random typed edges per chunk + sequence edges, 10,000 edges per call (one transaction each)"}
                    print(f"    kgrag store_edges: {edges:,} edges in {secs:.1f}s = {edges / secs:,.0f}/s", flush=True)
        out["systems"] = {label: out["systems"][label] for label, _, _ in SYSTEMS if label in out["systems"]}
    ceiling = out["systems"][CEILING]["chunks_per_s"]
    for s in out["systems"].values():
        s["share_of_ceiling"] = round(s["chunks_per_s"] / ceiling, 3)
    return out


def musique_from_text(srv: BenchServer, *, limit: int | None = None) -> dict[str, Any]:
    """The MuSiQue corpus (3,141 paragraphs) from text: chunk, embed, store; one document per
    paragraph, through the Ingestor when it is there, else store_document + embedder."""
    from kgrag_neo4j.providers import HashingEmbedder, WordLlamaEmbedder

    from .datasets import load
    from .quality import ingest_paragraphs

    data = load("musique")
    if limit:
        data.paragraphs = data.paragraphs[:limit]
    out: dict[str, Any] = {"paragraphs": len(data.paragraphs)}
    for name, embedder in (("hashing", HashingEmbedder()), ("wordllama", WordLlamaEmbedder())):
        clear_database(srv.driver, drop_vector_indexes=True)
        store = srv.store(namespace="musique")
        embedder.embed(["warm up"])  # model loading is not ingest time
        t0 = time.perf_counter()
        embedder.embed([p.text for p in data.paragraphs])
        embed_only = time.perf_counter() - t0
        t0 = time.perf_counter()
        ingested = ingest_paragraphs(store, embedder, data.paragraphs)
        secs = time.perf_counter() - t0
        out[name] = {"embedder": embedder.name, "seconds": round(secs, 2), "paragraphs_per_s": round(len(data.paragraphs) / secs, 1),
                     "chunks": ingested.chunks, "path": ingested.path, "embedding_seconds": round(embed_only, 2)}
        print(f"    MuSiQue with {embedder.name}: {len(data.paragraphs):,} paragraphs in {secs:.1f}s "
              f"({len(data.paragraphs) / secs:,.0f}/s; embedding alone {embed_only:.1f}s; {ingested.path})", flush=True)
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    sizes = args.sizes or (QUICK_SIZES if args.quick else FULL_SIZES)
    head = print_header("ingest", neo4j_version="(per size, fresh server)", embedder="none for chunks/s (precomputed 384-dim vectors); hashing and WordLlama for MuSiQue",
                        sizes=sizes, extra={"schema": "kgrag's (id constraint, namespace/document indexes, full-text, vector 384 cosine) for every system"})
    results: dict[str, Any] = {**head, "runs": []}
    for size in sizes:
        print(f"\n  [{size:,} chunks]", flush=True)
        r = one_size(size, args)
        results["neo4j"] = r["neo4j"]
        results["runs"].append(r)
        rows = [[name, s["chunks"], s["seconds"], s["chunks_per_s"], s["share_of_ceiling"]] for name, s in r["systems"].items()]
        rows.append(["kgrag store_edges (edges)", r["edges"]["edges"], r["edges"]["seconds"], r["edges"]["edges_per_s"], None])
        print_table(f"Ingest of {size:,} chunks with precomputed embeddings", ["system", "chunks", "seconds", "per second", "x ceiling"], rows)
        write_results(result_name("ingest", args), results, args.json)
    if not getattr(args, "skip_musique", False):
        print("\n  [MuSiQue corpus from text]", flush=True)
        with bench_server(heap="2g", pagecache="1g") as srv:
            results["musique"] = musique_from_text(srv, limit=MUSIQUE_QUICK if args.quick else None)
        m = results["musique"]
        print_table(f"MuSiQue corpus from text ({m['paragraphs']:,} paragraphs, one document each)",
                    ["embedder", "seconds", "paragraphs/s", "embedding alone s", "path"],
                    [[m[k]["embedder"], m[k]["seconds"], m[k]["paragraphs_per_s"], m[k]["embedding_seconds"], m[k]["path"]]
                     for k in ("hashing", "wordllama")])
    write_results(result_name("ingest", args), results, args.json)
    return results
