"""Vector seeds against the exact answer, on real text: recall@10 and latency of kgrag's
vector search at ``vector_overfetch`` 1, 4 and 8, of the peers' index call, and the curve of
the index alone (candidates asked vs recall vs milliseconds), on bench/realtext.py's corpus
(the Python manual and the manual pages, WordLlama vectors) with manual-page descriptions as
queries.

Neo4j's vector index is approximate (HNSW). kgrag asks it for ``max(top_k * vector_overfetch,
top_k + 10)`` candidates (overfetch 4 by default) and keeps the best; neo4j-graphrag and
langchain-neo4j ask for exactly ``top_k`` unless given an ``effective_search_ratio``. This
benchmark prices the choice: the share of the exact top 10 (brute-force cosine over every
stored vector, in numpy) each setting finds, and its p50 / p95 latency, timed round-robin
like the latency benchmark.

    python -m bench seed_recall [--sizes 10000 100000] [--queries 200]
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from .common import bench_server, print_header, print_table, result_name, stats_ms, write_results
from .realtext import chunk_id, exact_top_k, load_into, load_realtext

__all__ = ["add_arguments", "run"]

QUICK_SIZES = [10_000]
FULL_SIZES = [10_000, 100_000]
TOP_K = 10
OVERFETCH = (1, 4, 8)  # fetch_k 20, 40, 80 for top 10
CURVE = (10, 20, 40, 80, 160, 320)  # candidates asked of the index alone
PEERS = "index asked for exactly 10 (the peers' default)"
INDEX_K = "CALL db.index.vector.queryNodes('chunk_embedding', $k, $v) YIELD node, score WITH node, score LIMIT 10 RETURN node.id AS id"


def add_arguments(p: argparse.ArgumentParser) -> None:
    try:
        p.add_argument("--queries", type=int, default=200, help="query vectors per measurement (default 200)")
    except argparse.ArgumentError:  # the suites' parser has it from the latency benchmark
        pass


def one_size(size: int, args: argparse.Namespace) -> dict[str, Any]:
    heap, pagecache = ("4g", "2g") if size > 50_000 else ("2g", "1g")
    corpus = load_realtext(size)
    out: dict[str, Any] = {"size": corpus.n, "top_k": TOP_K, "settings": {}, "curve": {}}
    qv = corpus.query_vectors[: args.queries]
    queries = qv.astype(np.float64).tolist()
    top, _ = exact_top_k(corpus.vectors, qv, TOP_K)
    truth = [{chunk_id(int(i)) for i in row} for row in top]
    with bench_server(heap=heap, pagecache=pagecache) as srv:
        out["neo4j"] = srv.neo4j_version
        store = srv.store()
        print(f"\n  [{corpus.n:,} chunks of real text] loading", flush=True)
        load_into(store, corpus, edges=False)
        stores = {f: srv.store(vector_overfetch=f) for f in OVERFETCH}
        session = srv.driver.session(database=srv.settings.database)

        def index_call(k: int):
            return lambda v: {r["id"] for r in session.run(INDEX_K, k=k, v=v)}

        searches = {PEERS: index_call(TOP_K), **{f"vector_overfetch {f}": (lambda v, s=s: {r.id for r in s.search_chunks(v, TOP_K)})
                                                  for f, s in stores.items()}}
        searches.update({f"index alone, {k} candidates": index_call(k) for k in CURVE if k != TOP_K})
        fetch = {PEERS: TOP_K, **{f"vector_overfetch {f}": max(TOP_K * f, TOP_K + 10) for f in OVERFETCH},
                 **{f"index alone, {k} candidates": k for k in CURVE}}
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
                    found[n].append(len(got & exact) / TOP_K)
        finally:
            session.close()
        for n in names:
            row = {"fetch_k": fetch[n], "recall_at_10": round(float(np.mean(found[n])), 4), **stats_ms(times[n])}
            (out["curve"] if n.startswith("index alone") else out["settings"])[n] = row
        out["curve"] = {str(r["fetch_k"]): r for r in sorted([*out["curve"].values(), {**out["settings"][PEERS]}], key=lambda r: r["fetch_k"])}
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    sizes = args.sizes or (QUICK_SIZES if args.quick else FULL_SIZES)
    head = print_header("seed_recall", neo4j_version="(per size, fresh server)",
                        embedder="WordLlama (256 dims), computed beforehand", sizes=sizes,
                        extra={"corpus": "real text: the Python 3.11 manual and the manual pages (bench/realtext.py)",
                               "queries": f"{args.queries} manual-page descriptions",
                               "truth": "exact cosine top 10 over every stored vector (numpy)"})
    results: dict[str, Any] = {**head, "runs": []}
    for size in sizes:
        r = one_size(size, args)
        results["neo4j"] = r["neo4j"]
        results["runs"].append(r)
        rows = [[n + (" (kgrag's default)" if n == "vector_overfetch 4" else ""), s["fetch_k"], s["recall_at_10"], s["p50"], s["p95"]]
                for n, s in r["settings"].items()]
        print_table(f"Vector seeds at {r['size']:,} chunks of real text: share of the exact top {TOP_K} found, and latency (ms)",
                    ["setting", "asked of the index", "recall@10", "p50", "p95"], rows)
        print_table(f"The index alone at {r['size']:,} chunks: candidates asked vs recall of the exact top {TOP_K} vs latency (ms)",
                    ["candidates", "recall@10", "p50", "p95"],
                    [[int(k), c["recall_at_10"], c["p50"], c["p95"]] for k, c in r["curve"].items()])
        write_results(result_name("seed_recall", args), results, args.json)
    return results
