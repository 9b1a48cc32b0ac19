"""Retrieval quality on real multi-hop questions (``/work/shared/bench-data``).

Protocol (the data README's): ingest the whole corpus of a set once, one document per
paragraph (its title as the document title, the chunk text "title\\ntext", as HippoRAG indexes
these sets), build the offline entity graph the way a user does (``kgrag entities build``:
names from the text and from document titles found wherever they are written, sentence
co-occurrence relations, ``references`` edges between chunks sharing a rare entity), then for
each question retrieve the top 5 paragraphs from the whole corpus and report recall@2,
recall@5 (share of the gold paragraphs in the top k, averaged over questions), all-gold@5
(share of questions with every gold paragraph in the top 5) and ms per query, for every
retrieval mode side by side, with the exact vector search (numpy over the same embeddings)
as the reference.

Defaults of the retrievers are used as they are: they were chosen on the train files only
(``--tune`` reruns that grid on musique_train and hotpotqa_train); the evaluation files are
never used to choose anything.
"""

from __future__ import annotations

import argparse
import itertools
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kgrag_neo4j import ids
from kgrag_neo4j.store import Neo4jStore
from kgrag_neo4j.types import Chunk, Document

from .common import bench_server, print_header, print_table, result_name, write_results
from .datasets import SETS, Dataset, Paragraph, load

__all__ = ["Ingested", "add_arguments", "chunk_text", "ingest_paragraphs", "run", "score_question"]

TOP_K = 5
TUNE_SETS = ("musique", "hotpotqa")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--sets", nargs="+", choices=SETS, help="question sets (default: all three)")
    p.add_argument("--questions", type=int, help="first N questions of each set (the corpus is always whole)")
    p.add_argument("--embedders", nargs="+", help="embedders (default: wordllama and hashing; quick: wordllama)")
    p.add_argument("--tune", action="store_true", help="run the settings grid on the train files instead")
    p.add_argument(
        "--train",
        action="store_true",
        help="the same rows on the train files (MuSiQue and HotpotQA: 2Wiki has none), for checking a change "
        "against the code before without looking at the evaluation files; results in quality-train.json",
    )
    p.add_argument(
        "--incremental",
        action="store_true",
        help="on the train files: a namespace built whole beside one whose last tenth came by plain ingest "
        "after the build (the graph kept current by ingest), graph and ppr recall side by side",
    )
    try:
        p.add_argument(
            "--uri", help="use this Neo4j (each set in a namespace of its own, deleted first) instead of a fresh local server"
        )
    except argparse.ArgumentError:  # the suites' parser may have it already
        pass


# --- ingestion ------------------------------------------------------------------------------


@dataclass
class Ingested:
    """Where each paragraph went: chunk id -> paragraph key, and the stored vectors (for the
    exact reference)."""

    chunk_to_key: dict[str, str] = field(default_factory=dict)
    keys: list[str] = field(default_factory=list)
    vectors: np.ndarray | None = None
    chunks: int = 0
    path: str = ""

    @property
    def chunk_ids(self) -> list[str]:
        return list(self.chunk_to_key)

    def key_of(self, result: Any) -> str | None:
        return self.chunk_to_key.get(result.id)


def chunk_text(p: Paragraph) -> str:
    """What is stored and embedded for a paragraph: its title on the first line, then the text."""
    return f"{p.title}\n{p.text}"


def ingest_paragraphs(store: Neo4jStore, embedder: Any, paragraphs: Sequence[Paragraph], *, workers: int = 4) -> Ingested:
    """One document per paragraph (title = the paragraph's title), one chunk each, embedded in
    batches of 64, written with ``store_document`` from ``workers`` threads."""
    out = Ingested()
    store.ensure_embedder(embedder.name, embedder.dimensions)
    texts = [chunk_text(p) for p in paragraphs]
    vectors: list[list[float]] = []
    for b in range(0, len(texts), 64):
        vectors.extend(embedder.embed(texts[b : b + 64], input_type="document"))
    jobs = []
    for p, text, v in zip(paragraphs, texts, vectors):
        doc_id = ids.document_id(store.namespace, p.key)
        chunk = Chunk(
            id=ids.chunk_id(doc_id, "flat", 0, text),
            document_id=doc_id,
            content=text,
            chunk_index=0,
            embedding=v,
            token_count=len(text.split()),
            metadata={"title": p.title},
        )
        out.chunk_to_key[chunk.id] = p.key
        out.keys.append(p.key)
        jobs.append((Document(id=doc_id, source=p.key, title=p.title, content_hash=ids.content_hash(text)), [chunk]))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(lambda job: store.store_document(*job), jobs))
    out.vectors = np.asarray(vectors, dtype=np.float32)
    out.vectors /= np.linalg.norm(out.vectors, axis=1, keepdims=True) + 1e-12
    out.chunks = len(jobs)
    out.path = "store_document, one document per paragraph"
    return out


# --- scoring (pure) ---------------------------------------------------------------------------


def score_question(ranked_keys: Sequence[str], gold: frozenset[str]) -> dict[str, float]:
    """recall@2, recall@5 and all-gold@5 of one ranking (paragraph keys, best first)."""
    top2, top5 = set(ranked_keys[:2]), set(ranked_keys[:5])
    return {
        "recall@2": len(gold & top2) / len(gold),
        "recall@5": len(gold & top5) / len(gold),
        "all@5": 1.0 if gold <= top5 else 0.0,
    }


def _ranked_keys(results: Sequence[Any], ingested: Ingested) -> list[str]:
    keys: list[str] = []
    for r in results:
        key = ingested.key_of(r)
        if key and key not in keys:
            keys.append(key)
    return keys


def evaluate(retrieve: Callable[[str], list[Any]], data: Dataset, ingested: Ingested) -> dict[str, Any]:
    totals: dict[str, float] = defaultdict(float)
    times = []
    for q in data.questions:
        t0 = time.perf_counter()
        results = retrieve(q.text)
        times.append(time.perf_counter() - t0)
        for k, v in score_question(_ranked_keys(results, ingested), q.gold).items():
            totals[k] += v
    n = len(data.questions)
    return {**{k: round(v / n, 4) for k, v in totals.items()}, "questions": n, "ms_per_query": round(1000 * sum(times) / n, 2)}


# --- configurations -----------------------------------------------------------------------------


def _embedder(name: str) -> Any:
    from kgrag_neo4j.providers import select_embedder

    return select_embedder(name)


class _Exact:
    """The reference: exact cosine top k over the stored vectors, in numpy (no index)."""

    def __init__(self, embedder: Any, ingested: Ingested):
        self.embedder, self.ingested = embedder, ingested
        self.ids = list(ingested.chunk_to_key)

    def retrieve(self, query: str, top_k: int) -> list[Any]:
        q = np.asarray(self.embedder.embed([query], input_type="query")[0], dtype=np.float32)
        scores = self.ingested.vectors @ (q / (np.linalg.norm(q) + 1e-12))
        order = np.argsort(-scores, kind="stable")[:top_k]

        @dataclass
        class Hit:
            id: str

        return [Hit(self.ids[i]) for i in order]


def _configs(store: Neo4jStore, embedder: Any, ingested: Ingested) -> list[tuple[str, str, Any]]:
    """(name, settings, retriever) per row, every retriever with its defaults."""
    from kgrag_neo4j.retrieval.entity import EntityGraphRetriever
    from kgrag_neo4j.retrieval.local_search import LocalSearchRetriever
    from kgrag_neo4j.retrieval.ppr import PPRRetriever
    from kgrag_neo4j.retrieval.retrievers import GraphRetriever, HybridRetriever, VectorRetriever

    return [
        ("exact vector", "numpy cosine over the stored vectors (the reference)", _Exact(embedder, ingested)),
        ("vector", "VectorRetriever (search --mode vector)", VectorRetriever(store, embedder)),
        ("hybrid", "HybridRetriever, RRF keyword weight 0.3 (search --mode hybrid)", HybridRetriever(store, embedder)),
        (
            "graph, seed blend",
            "GraphRetriever blend='seed': the original formula, 10 seeds, 2 hops, outgoing edges",
            GraphRetriever(store, embedder, blend="seed"),
        ),
        (
            "graph",
            "GraphRetriever defaults (search --mode graph): blend 'propagate', entity seeds, 10 seeds, 2 hops",
            GraphRetriever(store, embedder),
        ),
        ("entity", "EntityGraphRetriever defaults (search --mode entity)", EntityGraphRetriever(store, embedder)),
        (
            "local",
            "LocalSearchRetriever defaults, text units in rank order (search --mode local)",
            LocalSearchRetriever(store, embedder),
        ),
        (
            "ppr",
            "PPRRetriever defaults (search --mode ppr): personalized PageRank over chunks and entities",
            PPRRetriever(store, embedder),
        ),
    ]


def build_graph(store: Neo4jStore, embedder: Any) -> dict[str, Any]:
    """What a user runs after ingesting: ``kgrag entities build`` (offline)."""
    from kgrag_neo4j.entities.pipeline import build_entities

    t0 = time.perf_counter()
    built = build_entities(store, embedder)
    return {
        "entities": built.entities,
        "mentions": built.mentions,
        "relations": built.relations,
        "entity_edges": built.entity_edges,
        "seconds": round(time.perf_counter() - t0, 1),
    }


def _delete_namespace(driver: Any, namespace: str) -> None:
    with driver.session() as session:
        session.run(
            "MATCH (n) WHERE n.namespace = $ns CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS", ns=namespace
        ).consume()


def load_set(srv: Any, data: Dataset, embedder: Any, namespace: str) -> tuple[Neo4jStore, Ingested, dict[str, Any], float]:
    _delete_namespace(srv.driver, namespace)
    store = srv.store(namespace=namespace)
    t0 = time.perf_counter()
    ingested = ingest_paragraphs(store, embedder, data.paragraphs)
    ingest_s = time.perf_counter() - t0
    print(
        f"    {data.name}/{data.split} / {embedder.name}: {len(data.paragraphs):,} paragraphs ingested in {ingest_s:.0f}s",
        flush=True,
    )
    graphs = build_graph(store, embedder)
    print(f"    entity graph: {graphs}", flush=True)
    return store, ingested, graphs, ingest_s


def one_set(srv: Any, data: Dataset, embedder_name: str) -> dict[str, Any]:
    embedder = _embedder(embedder_name)
    store, ingested, graphs, ingest_s = load_set(srv, data, embedder, f"quality-{data.name.replace('2', 'two')}")
    rows = {}
    for name, settings, retriever in _configs(store, embedder, ingested):
        rows[name] = {"settings": settings, **evaluate(lambda q, r=retriever: r.retrieve(q, TOP_K), data, ingested)}
    return {
        "embedder": embedder.name,
        "paragraphs": len(data.paragraphs),
        "questions": len(data.questions),
        "ingest_seconds": round(ingest_s, 1),
        "ingest_path": ingested.path,
        "graphs": graphs,
        "rows": rows,
    }


def _print_set(name: str, res: dict[str, Any]) -> None:
    vec = res["rows"]["vector"]
    table = []
    for row, m in res["rows"].items():
        table.append(
            [
                row,
                m["recall@2"],
                m["recall@5"],
                m["all@5"],
                round(m["recall@5"] - vec["recall@5"], 4),
                round(m["all@5"] - vec["all@5"], 4),
                m["ms_per_query"],
            ]
        )
    print_table(
        f"{name}: {res['questions']} questions, {res['paragraphs']:,} paragraphs, embedder {res['embedder']}",
        ["configuration", "recall@2", "recall@5", "all-gold@5", "R@5 - vector", "all@5 - vector", "ms/query"],
        table,
    )


# --- tuning on the train files ----------------------------------------------------------------

#: the grid ``--tune`` runs: every option of the propagate blend and of the PageRank walk that
#: has no value from the original formula; the defaults in the library are its best mean recall@5 over
#: the train sets (ties: the better all-gold@5, then the simpler or cheaper setting)
GRID: dict[str, dict[str, Sequence[Any]]] = {
    "graph": {"entity_seed_weight": (0.0, 0.2, 0.35, 0.7), "entity_max_chunks": (10, 25)},
    "ppr": {"damping": (0.5, 0.7), "temperature": (0.02, 0.05), "entity_share": (0.2, 0.33)},
}


def tune(args: argparse.Namespace) -> dict[str, Any]:
    """Every grid point of :data:`GRID` on the train files of MuSiQue and HotpotQA."""
    from kgrag_neo4j.retrieval.ppr import PPRRetriever
    from kgrag_neo4j.retrieval.retrievers import GraphRetriever, VectorRetriever

    out: dict[str, Any] = {"grid": {k: {o: list(v) for o, v in g.items()} for k, g in GRID.items()}, "points": {}}
    embedder = _embedder("wordllama")
    with _server(args) as srv:
        for set_name in TUNE_SETS:
            data = load(set_name, split="train")
            store, ingested, graphs, _ = load_set(srv, data, embedder, f"tune-{set_name}")
            out["points"].setdefault("vector", {})[set_name] = evaluate(
                lambda q: VectorRetriever(store, embedder).retrieve(q, TOP_K), data, ingested
            )
            for kind, grid in GRID.items():
                names = list(grid)
                for values in itertools.product(*(grid[n] for n in names)):
                    point = dict(zip(names, values))
                    cls = GraphRetriever if kind == "graph" else PPRRetriever
                    retriever = cls(store, embedder, **point)
                    key = kind + " " + " ".join(f"{n}={v}" for n, v in point.items())
                    out["points"].setdefault(key, {})[set_name] = evaluate(
                        lambda q, r=retriever: r.retrieve(q, TOP_K), data, ingested
                    )
    ranked = []
    for key, by_set in out["points"].items():
        if len(by_set) == len(TUNE_SETS):
            mean = {m: round(float(np.mean([by_set[s][m] for s in TUNE_SETS])), 4) for m in ("recall@2", "recall@5", "all@5")}
            ranked.append((key, mean, by_set))
    ranked.sort(key=lambda x: (-x[1]["recall@5"], -x[1]["all@5"]))
    for key, mean, by_set in ranked:
        print(
            f"    {key:<75} mean R@5 {mean['recall@5']:.3f} all@5 {mean['all@5']:.3f} | "
            + " | ".join(f"{s} R@5 {by_set[s]['recall@5']:.3f} all@5 {by_set[s]['all@5']:.3f}" for s in TUNE_SETS)
        )
    out["ranked"] = [{"setting": k, "mean": m} for k, m, _ in ranked]
    return out


def incremental(args: argparse.Namespace) -> dict[str, Any]:
    """The entity graph kept current against one built whole: per train set, namespace
    ``whole`` ingests every paragraph then builds; namespace ``grown`` ingests the first nine
    tenths, builds, then ingests the last tenth the way ``kgrag ingest`` does on a namespace
    with a graph (the write, then ``maintain_entity_graph``). Vector, graph and ppr with their
    defaults on both."""
    from kgrag_neo4j.entities.maintain import maintain_entity_graph
    from kgrag_neo4j.retrieval.ppr import PPRRetriever
    from kgrag_neo4j.retrieval.retrievers import GraphRetriever, VectorRetriever

    embedder = _embedder("wordllama")
    out: dict[str, Any] = {}
    with _server(args) as srv:
        for set_name in args.sets or TUNE_SETS:
            data = load(set_name, split="train").subset(args.questions)
            cut = len(data.paragraphs) * 9 // 10
            whole, whole_ingested, _, _ = load_set(srv, data, embedder, f"whole-{set_name}")
            _delete_namespace(srv.driver, f"grown-{set_name}")
            grown = srv.store(namespace=f"grown-{set_name}")
            first = ingest_paragraphs(grown, embedder, data.paragraphs[:cut])
            build_graph(grown, embedder)
            t0 = time.perf_counter()
            rest = ingest_paragraphs(grown, embedder, data.paragraphs[cut:])
            kept = maintain_entity_graph(grown, embedder)
            seconds = round(time.perf_counter() - t0, 1)
            grown_ingested = Ingested(chunk_to_key={**first.chunk_to_key, **rest.chunk_to_key}, keys=first.keys + rest.keys)
            state = grown.entity_graph_state()
            rows: dict[str, Any] = {}
            for mode, make in (("vector", VectorRetriever), ("graph", GraphRetriever), ("ppr", PPRRetriever)):
                for label, store, ingested in (("whole", whole, whole_ingested), ("grown", grown, grown_ingested)):
                    retriever = make(store, embedder)
                    rows[f"{mode} {label}"] = evaluate(lambda q, r=retriever: r.retrieve(q, TOP_K), data, ingested)
            out[set_name] = {
                "paragraphs": len(data.paragraphs),
                "last_tenth": len(data.paragraphs) - cut,
                "last_tenth_seconds": seconds,
                "maintenance": kept.as_dict() if kept else None,
                "status": {k: state[k] for k in ("documents", "documents_linked", "chunks", "chunks_linked")},
                "rows": rows,
            }
            table = [[name, m["recall@2"], m["recall@5"], m["all@5"]] for name, m in rows.items()]
            print_table(
                f"{set_name} train: {len(data.questions)} questions, last tenth ({len(data.paragraphs) - cut:,} "
                f"paragraphs) by ingest after the build in {seconds}s; status {out[set_name]['status']}",
                ["configuration", "recall@2", "recall@5", "all-gold@5"],
                table,
            )
    return out


def _server(args: argparse.Namespace) -> Any:
    import contextlib

    if not getattr(args, "uri", None):
        return bench_server(heap="2g", pagecache="1g")

    @contextlib.contextmanager
    def existing():
        from kgrag_neo4j.settings import Neo4jSettings
        from kgrag_neo4j.store.runner import connect_driver

        from .common import BenchServer

        settings = Neo4jSettings.from_env(uri=args.uri)
        driver = connect_driver(settings)
        try:
            yield BenchServer(settings, driver, Neo4jStore(driver).verify()["version"], "?", "?")
        finally:
            driver.close()

    return existing()


def run(args: argparse.Namespace) -> dict[str, Any]:
    if getattr(args, "incremental", False):
        results = {"incremental": incremental(args)}
        write_results("quality-incremental", results, args.json)
        return results
    if args.tune:
        results = {"tune": tune(args)}
        write_results("quality-tune", results, args.json)
        return results
    train = getattr(args, "train", False)
    sets = args.sets or (["musique"] if args.quick else list(TUNE_SETS if train else SETS))
    questions = args.questions or (100 if args.quick else None)
    embedders = list(args.embedders or (["wordllama"] if args.quick else ["wordllama", "hashing"]))
    head = print_header(
        "quality",
        neo4j_version="(fresh server)",
        embedder=", ".join(embedders),
        sizes={s: f"whole corpus, {questions or 'all'} questions" for s in sets},
        extra={
            "protocol": "one document per paragraph, offline entity graph, top 5 per question, recall@2 / recall@5 / all-gold@5"
        },
    )
    results: dict[str, Any] = {**head, "sets": {}}
    with _server(args) as srv:
        results["neo4j"] = srv.neo4j_version
        for set_name in sets:
            data = load(set_name, split="train" if train else "dev").subset(questions)
            results["sets"][set_name] = {}
            for embedder_name in embedders:
                res = one_set(srv, data, embedder_name)
                results["sets"][set_name][embedder_name] = res
                _print_set(set_name, res)
                write_results(result_name("quality-train" if train else "quality", args), results, args.json)
    return results
