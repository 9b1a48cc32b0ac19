"""Vector seeds against the exact answer: recall@10 and latency of kgrag's vector search at
``vector_overfetch`` 1, 4 and 8, and of the peers' index call, on the latency benchmark's
synthetic corpus.

Neo4j's vector index is approximate (HNSW). kgrag asks it for ``max(top_k * vector_overfetch,
top_k + 10)`` candidates (overfetch 4 by default) and keeps the best; neo4j-graphrag and
langchain-neo4j ask for exactly ``top_k`` (the first row: the same index call with k = 10, as
one statement). This benchmark prices the choice: the share of the exact top 10 (brute-force
cosine over every stored vector, in numpy) each setting finds, and its p50 / p95 latency,
timed round-robin like the latency benchmark.

    python -m bench seed_recall [--sizes 10000 100000] [--queries 200]
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from .common import bench_server, print_header, print_table, result_name, stats_ms, write_results
from .synthetic import DIMENSIONS, SyntheticCorpus, chunk_id, load_corpus

__all__ = ["add_arguments", "run"]

QUICK_SIZES = [10_000]
FULL_SIZES = [10_000, 100_000]
TOP_K = 10
OVERFETCH = (1, 4, 8)  # fetch_k 20, 40, 80 for top 10
PEERS = "index asked for exactly 10 (the peers)"
EXACT_K = "CALL db.index.vector.queryNodes('chunk_embedding', $k, $v) YIELD node RETURN node.id AS id"


def add_arguments(p: argparse.ArgumentParser) -> None:
    try:
        p.add_argument("--queries", type=int, default=200, help="query vectors per measurement (default 200)")
    except argparse.ArgumentError:  # the suites' parser has it from the latency benchmark
        pass


def exact_top_k(corpus: SyntheticCorpus, queries: list[list[float]], k: int = TOP_K) -> list[list[str]]:
    """Brute-force cosine top ``k`` of every query (vectors are unit length: dot = cosine)."""
    q = np.asarray(queries, dtype=np.float32)
    best_scores = np.full((len(queries), 0), -np.inf, dtype=np.float32)
    best_ids = np.zeros((len(queries), 0), dtype=np.int64)
    block = 10_000
    for start in range(0, corpus.n, block):
        stop = min(corpus.n, start + block)
        scores = q @ corpus.vectors(start, stop).T
        ids = np.broadcast_to(np.arange(start, stop), scores.shape)
        scores = np.concatenate([best_scores, scores], axis=1)
        ids = np.concatenate([best_ids, ids], axis=1)
        keep = np.argsort(-scores, axis=1, kind="stable")[:, :k]
        best_scores = np.take_along_axis(scores, keep, axis=1)
        best_ids = np.take_along_axis(ids, keep, axis=1)
    return [[chunk_id(int(i)) for i in row] for row in best_ids]


def one_size(size: int, args: argparse.Namespace) -> dict[str, Any]:
    heap, pagecache = ("4g", "2g") if size > 50_000 else ("2g", "1g")
    out: dict[str, Any] = {"size": size, "top_k": TOP_K, "settings": {}}
    corpus = SyntheticCorpus(size)
    queries = corpus.queries(args.queries)
    truth = exact_top_k(corpus, queries)
    with bench_server(heap=heap, pagecache=pagecache) as srv:
        out["neo4j"] = srv.neo4j_version
        store = srv.store()
        store.init_schema(DIMENSIONS, model="synthetic-384")
        print(f"\n  [{size:,} chunks] loading", flush=True)
        load_corpus(store, corpus, progress=False)
        stores = {f: srv.store(vector_overfetch=f) for f in OVERFETCH}
        session = srv.driver.session(database=srv.settings.database)

        def peers_call(v: list[float]) -> set[str]:
            return {r["id"] for r in session.run(EXACT_K, k=TOP_K, v=v)}

        searches = {PEERS: peers_call, **{f"vector_overfetch {f}": (lambda v, s=s: {r.id for r in s.search_chunks(v, TOP_K)})
                                          for f, s in stores.items()}}
        fetch = {PEERS: TOP_K, **{f"vector_overfetch {f}": max(TOP_K * f, TOP_K + 10) for f in OVERFETCH}}
        try:
            for v in queries[:20]:
                for search in searches.values():
                    search(v)
            names = list(searches)
            times: dict[str, list[float]] = {n: [] for n in names}
            found: dict[str, list[float]] = {n: [] for n in names}
            for i, (v, exact) in enumerate(zip(queries, truth)):
                for n in names[i % len(names):] + names[: i % len(names)]:
                    t0 = time.perf_counter()
                    got = searches[n](v)
                    times[n].append(time.perf_counter() - t0)
                    found[n].append(len(got & set(exact)) / TOP_K)
        finally:
            session.close()
        for n in names:
            out["settings"][n] = {"fetch_k": fetch[n], "recall_at_10": round(float(np.mean(found[n])), 4), **stats_ms(times[n])}
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    sizes = args.sizes or (QUICK_SIZES if args.quick else FULL_SIZES)
    head = print_header("seed_recall", neo4j_version="(per size, fresh server)",
                        embedder="none (precomputed 384-dim random unit vectors)", sizes=sizes,
                        extra={"queries": f"{args.queries} query vectors near stored chunks",
                               "truth": "exact cosine top 10 over every stored vector (numpy)"})
    results: dict[str, Any] = {**head, "runs": []}
    for size in sizes:
        r = one_size(size, args)
        results["neo4j"] = r["neo4j"]
        results["runs"].append(r)
        rows = [[n + (" (kgrag's default)" if n == "vector_overfetch 4" else ""), s["fetch_k"], s["recall_at_10"], s["p50"], s["p95"]]
                for n, s in r["settings"].items()]
        print_table(f"Vector seeds at {size:,} chunks: share of the exact top {TOP_K} found, and latency (ms)",
                    ["setting", "asked of the index", "recall@10", "p50", "p95"], rows)
        write_results(result_name("seed_recall", args), results, args.json)
    return results
