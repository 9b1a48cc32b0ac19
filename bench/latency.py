"""Retrieval latency on synthetic data: kgrag's one-statement graph retrieval against the
seed's per-hop loop, plain vector search, and the peers' graph retrieval (neo4j-graphrag
``VectorCypherRetriever``, langchain-neo4j ``Neo4jVector``) on the same store, index and
query vectors. Embedding time is excluded everywhere and reported on its own.

Systems are timed round-robin, query by query (the order rotates), so load from anything
else on the machine falls on all of them alike.
"""

from __future__ import annotations

import argparse
import time
from typing import Any, Callable

from kgrag_neo4j.retrieval.scoring import GraphOptions, blend_and_rank, expand_per_hop
from kgrag_neo4j.store import Neo4jStore
from kgrag_neo4j.types import filters_to_param

from . import peers
from .common import BenchServer, bench_server, print_header, print_table, result_name, stats_ms, write_results
from .synthetic import DIMENSIONS, SyntheticCorpus, load_corpus, store_random_edges

__all__ = ["add_arguments", "run"]

QUICK_SIZES = [10_000]
FULL_SIZES = [10_000, 100_000, 300_000]
SEEDS = 10  # seed_top_k, the seed's default
RESULT_K = 20  # seeds + the best graph hits, so the expansion shows in every result
HOP_DECAY = (1.0, 0.7, 0.5)
DENSE_EXTRA_DEGREE = 15  # the dense graph: out-degree 5 + 15 + sequence
QUICK_HOP_QUERIES = 50
DENSE_QUERIES = 10  # the per-hop loop at 3 hops on the dense graph reads most of it per query


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--queries", type=int, default=200, help="query vectors per measurement (default 200)")
    p.add_argument("--no-peers", action="store_true", help="skip neo4j-graphrag and langchain-neo4j")


Search = Callable[[list[float]], list[str]]


def native(store: Neo4jStore, hops: int) -> Search:
    def search(v: list[float]) -> list[str]:
        rows = store.graph_retrieve(embedding=v, top_k=RESULT_K, seed_top_k=SEEDS, max_hops=hops,
                                    hop_decay=HOP_DECAY, bidirectional=True)
        return [r.id for r in rows]

    return search


def per_hop(store: Neo4jStore, hops: int) -> Search:
    """The seed's loop (``GraphRetriever(native=False)``): seeds, one ``get_edges`` and one
    ``get_incoming_edges`` per hop, blend, then fetch the graph-found chunks."""
    options = GraphOptions(max_hops=hops, bidirectional=True, seed_top_k=SEEDS, hop_decay=HOP_DECAY)

    def search(v: list[float]) -> list[str]:
        seeds = store.search_chunks(v, SEEDS)
        hits = expand_per_hop([r.id for r in seeds], store.get_edges, store.get_incoming_edges, options)
        ranked = blend_and_rank({r.id: r.score for r in seeds}, hits, RESULT_K,
                                vector_weight=options.vector_weight, graph_weight=options.graph_weight)
        seed_ids = {r.id for r in seeds}
        store.get_chunks_by_ids([r.chunk_id for r in ranked if r.chunk_id not in seed_ids])
        return [r.chunk_id for r in ranked]

    return search


def vector_only(store: Neo4jStore) -> Search:
    def search(v: list[float]) -> list[str]:
        return [r.id for r in store.search_chunks(v, SEEDS)]

    return search


def measure(systems: dict[str, Search], queries: list[list[float]], *stores: Neo4jStore, warmup: int = 20) -> dict[str, Any]:
    """Round-robin timing; returns per system the latency stats, round trips per query (as
    counted by the runners of ``stores``; one system runs at a time) and the overlap of its
    results with the first system's."""
    names = list(systems)

    def round_trips() -> int:
        return sum(s.runner.round_trips for s in stores)

    for v in queries[:warmup]:
        for name in names:
            systems[name](v)
    times: dict[str, list[float]] = {n: [] for n in names}
    trips: dict[str, int] = {n: 0 for n in names}
    results: dict[str, list[list[str]]] = {n: [] for n in names}
    for i, v in enumerate(queries):
        order = names[i % len(names):] + names[: i % len(names)]
        for name in order:
            before = round_trips()
            t0 = time.perf_counter()
            ids = systems[name](v)
            times[name].append(time.perf_counter() - t0)
            trips[name] += round_trips() - before
            results[name].append(ids)
    reference = results[names[0]]
    out = {}
    for name in names:
        overlap = [len(set(a) & set(b)) / max(1, len(b)) for a, b in zip(results[name], reference)]
        out[name] = {
            **stats_ms(times[name]),
            "round_trips": round(trips[name] / len(queries), 2) if trips[name] else None,
            "overlap_with_native": round(sum(overlap) / len(overlap), 3),
            "results_per_query": round(sum(len(r) for r in results[name]) / len(queries), 1),
        }
    return out


def _profile_native(store: Neo4jStore, queries: list[list[float]], hops: int) -> dict[str, float]:
    hits, rows = [], []
    for v in queries:
        p = store.runner.profile(
            "graph/retrieve", namespace=store.namespace, embedding=v, keyword_query="", keyword_weight=0.0,
            rrf_k=60, seed_top_k=SEEDS, fetch_k=max(SEEDS * store.vector_overfetch, SEEDS + 10),
            filter=filters_to_param(()), max_hops=hops, hop_decay=list(HOP_DECAY), vector_weight=0.7,
            graph_weight=0.3, bidirectional=True, relations=None, min_weight=0.0, top_k=RESULT_K,
        )
        hits.append(p["db_hits"])
        rows.append(p["rows"])
    return {"db_hits_mean": round(sum(hits) / len(hits)), "rows": round(sum(rows) / len(rows), 1)}


def _profile_peer(srv: BenchServer, queries: list[list[float]]) -> dict[str, float] | None:
    try:
        text = peers.peer_query_text()
    except ImportError:
        return None
    from kgrag_neo4j.store.runner import _sum_hits

    hits = []
    with srv.driver.session(database=srv.settings.database) as session:
        for v in queries:
            result = session.run("PROFILE " + text, {"vector_index_name": peers.INDEX, "top_k": SEEDS,
                                                     "effective_search_ratio": 1, "query_vector": v, "result_k": RESULT_K})
            list(result)
            hits.append(_sum_hits(result.consume().profile or {}))
    return {"db_hits_mean": round(sum(hits) / len(hits))}


def _edge_count(srv: BenchServer) -> int:
    with srv.driver.session(database=srv.settings.database) as s:
        return s.run("MATCH ()-[r:RELATES_TO]->() RETURN count(r) AS n").single()["n"]


def one_size(size: int, args: argparse.Namespace, *, dense: bool) -> dict[str, Any]:
    heap, pagecache = ("4g", "2g") if size > 50_000 else ("2g", "1g")
    out: dict[str, Any] = {"size": size}
    with bench_server(heap=heap, pagecache=pagecache) as srv:
        out["neo4j"] = srv.neo4j_version
        store = srv.store()
        store.init_schema(DIMENSIONS, model="synthetic-384")
        corpus = SyntheticCorpus(size)
        print(f"\n  [{size:,} chunks] loading with store_document ({corpus.doc_size} chunks per document)", flush=True)
        out["load_seconds"] = round(load_corpus(store, corpus), 1)
        edges, secs = store_random_edges(store, size)
        out["edges"], out["edge_seconds"] = edges, round(secs, 1)
        queries = corpus.queries(args.queries)

        store_overfetch_1 = srv.store(vector_overfetch=1)
        systems: dict[str, Search] = {
            "kgrag graph, one statement": native(store, 2),
            # the peers ask the vector index for exactly the seeds; kgrag for 4x (40) and keeps
            # the best (ANN recall, filters); overfetch 1 asks for seeds + 10 (20): this row
            # shows what the default costs (bench/seed_recall.py what it buys)
            "kgrag graph, one statement, overfetch 1": native(store_overfetch_1, 2),
            "kgrag graph, per-hop loop": per_hop(store, 2),
            "vector only (kgrag search_chunks)": vector_only(store),
        }
        if not args.no_peers:
            for label, make in (("neo4j-graphrag VectorCypherRetriever", lambda: peers.graphrag_retriever(srv, seeds=SEEDS, result_k=RESULT_K)),
                                ("langchain-neo4j Neo4jVector", lambda: peers.langchain_retriever(srv, dimensions=DIMENSIONS, seeds=SEEDS, result_k=RESULT_K))):
                try:
                    systems[label] = make()
                except peers.PeerUnavailable as exc:
                    print(f"    {label}: skipped ({exc})")
        print(f"  [{size:,}] timing {len(systems)} systems x {len(queries)} queries (2 hops, both directions)", flush=True)
        out["systems"] = measure(systems, queries, store, store_overfetch_1)
        vec = out["systems"]["vector only (kgrag search_chunks)"]
        for s in out["systems"].values():
            s["ratio_p50_to_vector"] = round(s["p50"] / vec["p50"], 2)
            s["ratio_mean_to_vector"] = round(s["mean"] / vec["mean"], 2)
        _print_systems(out)

        print(f"  [{size:,}] hops 1, 2, 3: one statement vs per-hop loop", flush=True)
        out["hops"] = {}
        # the per-hop loop at 3 hops is slow; a quick run times hops on fewer queries
        hop_queries = queries[:QUICK_HOP_QUERIES] if args.quick else queries
        for hops in (1, 2, 3):
            m = measure({"one statement": native(store, hops), "per-hop loop": per_hop(store, hops)}, hop_queries, store, warmup=10)
            out["hops"][str(hops)] = m
        _print_hops(out)

        if dense:
            extra, _ = store_random_edges(store, size, out_degree=DENSE_EXTRA_DEGREE, sequence=False, salt=1)
            total = _edge_count(srv)
            print(f"  [{size:,}] dense graph: +{extra:,} edges ({total / size:.1f} per chunk); PROFILE", flush=True)
            sample = queries[:DENSE_QUERIES]
            dense_out: dict[str, Any] = {"edges": total, "out_degree": round(total / size, 1), "profile": {}, "latency": {}}
            for hops in (1, 2, 3):
                dense_out["profile"][str(hops)] = _profile_native(store, sample, hops)
                dense_out["latency"][str(hops)] = measure({"one statement": native(store, hops), "per-hop loop": per_hop(store, hops)},
                                                          queries[:DENSE_QUERIES], store, warmup=5)
            if not args.no_peers:
                dense_out["peer_profile_2_hops"] = _profile_peer(srv, sample)
                try:
                    dense_out["peer_latency_2_hops"] = measure(
                        {"one statement": native(store, 2),
                         "neo4j-graphrag VectorCypherRetriever": peers.graphrag_retriever(srv, seeds=SEEDS, result_k=RESULT_K)},
                        queries[:DENSE_QUERIES], store, warmup=5)
                except peers.PeerUnavailable:
                    pass
            out["dense"] = dense_out
            _print_dense(out)
    return out


def _print_systems(r: dict[str, Any]) -> None:
    rows = [[name, s["p50"], s["p95"], s["mean"], s["ratio_p50_to_vector"], s["round_trips"], s["overlap_with_native"]]
            for name, s in r["systems"].items()]
    print_table(f"Latency at {r['size']:,} chunks ({r['edges']:,} edges), ms; x vector = p50 / vector-only p50; "
                "same results = share of the one statement's result ids",
                ["system", "p50", "p95", "mean", "x vector", "round trips", "same results"], rows)


def _print_hops(r: dict[str, Any]) -> None:
    rows = [[h, m["one statement"]["p50"], m["one statement"]["mean"], m["per-hop loop"]["p50"], m["per-hop loop"]["mean"],
             round(m["per-hop loop"]["p50"] / m["one statement"]["p50"], 2)] for h, m in r["hops"].items()]
    print_table(f"Hops at {r['size']:,} chunks, ms", ["hops", "one stmt p50", "one stmt mean", "per-hop p50", "per-hop mean",
                                                      "per-hop / one stmt"], rows)


def _print_dense(r: dict[str, Any]) -> None:
    d = r["dense"]
    rows = [[h, d["profile"][h]["db_hits_mean"], d["latency"][h]["one statement"]["p50"], d["latency"][h]["per-hop loop"]["p50"]]
            for h in d["profile"]]
    print_table(f"Dense graph at {r['size']:,} chunks ({d['out_degree']} edges per chunk): PROFILE db hits of the one statement",
                ["hops", "db hits", "one stmt p50 ms", "per-hop p50 ms"], rows)
    if d.get("peer_profile_2_hops"):
        print(f"  peer 2-hop retrieval query (variable-length pattern): {d['peer_profile_2_hops']['db_hits_mean']:,} db hits "
              f"vs one statement {d['profile']['2']['db_hits_mean']:,}")


def embedding_times(*, queries: int = 200, batches: int = 10) -> dict[str, Any]:
    """Per-query and per-64-chunk-batch embedding time of each available embedder, on real
    MuSiQue questions and paragraphs."""
    from kgrag_neo4j.providers import HashingEmbedder, WordLlamaEmbedder

    from .datasets import load

    data = load("musique")
    texts = [q.text for q in data.questions][:queries]
    paragraphs = [p.text for p in data.paragraphs]
    embedders: list[tuple[str, Callable[[], Any]]] = [("hashing", HashingEmbedder), ("wordllama", WordLlamaEmbedder)]
    out: dict[str, Any] = {}
    try:
        from kgrag_neo4j.providers import SentenceTransformerEmbedder

        SentenceTransformerEmbedder()
        embedders.append(("minilm", SentenceTransformerEmbedder))
    except Exception as exc:  # the extra is not installed: say so in the table
        out["minilm"] = {"available": False, "reason": str(exc).split(":")[0]}
    for name, make in embedders:
        e = make()
        e.embed(["warm up"], input_type="query")
        per_query = []
        for t in texts:
            t0 = time.perf_counter()
            e.embed([t], input_type="query")
            per_query.append(time.perf_counter() - t0)
        per_batch = []
        for b in range(batches):
            batch = paragraphs[b * 64:(b + 1) * 64]
            t0 = time.perf_counter()
            e.embed(batch, input_type="document")
            per_batch.append(time.perf_counter() - t0)
        out[name] = {"available": True, "model": e.name, "dimensions": e.dimensions,
                     "query": stats_ms(per_query), "batch_64": stats_ms(per_batch)}
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    sizes = args.sizes or (QUICK_SIZES if args.quick else FULL_SIZES)
    head = print_header("latency", neo4j_version="(per size, fresh server)", embedder="none (precomputed 384-dim random unit vectors; embedding timed separately)",
                        sizes=sizes, extra={"queries": f"{args.queries} precomputed query vectors, same for every system",
                                            "graph": "random typed weighted edges, out-degree 5, plus sequence edges",
                                            "retrieval": f"{SEEDS} seeds, 2 hops, both directions, top {RESULT_K}"})
    results: dict[str, Any] = {**head, "runs": []}
    for i, size in enumerate(sizes):
        r = one_size(size, args, dense=(i == 0 and not args.quick))
        results["neo4j"] = r["neo4j"]
        results["runs"].append(r)
        write_results(result_name("latency", args), results, args.json)
    print("\n  embedding time (MuSiQue questions / 64-paragraph batches)", flush=True)
    results["embedding"] = embedding_times(queries=args.queries)
    rows = []
    for name, e in results["embedding"].items():
        if e.get("available"):
            rows.append([f"{name} ({e['dimensions']} dims)", e["query"]["p50"], e["query"]["mean"], e["batch_64"]["p50"], e["batch_64"]["mean"]])
        else:
            rows.append([f"{name}: not available ({e['reason']})", None, None, None, None])
    print_table("Embedding time, ms", ["embedder", "query p50", "query mean", "64-batch p50", "64-batch mean"], rows)
    write_results(result_name("latency", args), results, args.json)
    return results
