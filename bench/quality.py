"""Retrieval quality on real multi-hop questions (``/work/shared/bench-data``).

Protocol (the data README's): ingest the whole corpus of a set once, one chunk per
paragraph with its title as the document title; for each question retrieve the top 5
paragraphs from the whole corpus; report recall@2, recall@5 (share of the gold paragraphs in
the top k, averaged over questions) and all-gold@5 (share of questions with every gold
paragraph in the top 5), per retriever configuration and embedder.

Configurations are fixed here and printed with the results. The graph settings (seeds,
hops, similarity threshold) were chosen on the train files only (``--tune`` reruns that grid
on musique_train and hotpotqa_train); the dev files are never used to choose anything.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from kgrag_neo4j import ids
from kgrag_neo4j.store import Neo4jStore
from kgrag_neo4j.types import Chunk, ChunkEdge, Document, RelationType

from .common import BenchServer, bench_server, clear_database, print_header, print_table, result_name, write_results
from .datasets import SETS, Dataset, Paragraph, load

__all__ = ["Ingested", "add_arguments", "entity_chunk_edges", "ingest_paragraphs", "run", "score_question"]

TOP_K = 5
# Graph settings, chosen on the train files with `--tune` (best mean recall@5 over musique_train
# and hotpotqa_train; see docs/benchmarks.md). Seeds are the vector hits kept; the graph fills
# the rest of the top 5 with their best neighbours. More hops never helped at top 5.
SIMILARITY_SEEDS = 4
ENTITY_SEEDS = 3
GRAPH_HOPS = 1
SIMILARITY_TOP_K = 5
SIMILARITY_THRESHOLD = 0.5
ENTITY_MAX_CHUNKS = 10  # an entity in more paragraphs than this links nothing (too common)
ENTITY_EDGES_PER_CHUNK = 10


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--sets", nargs="+", choices=SETS, help="question sets (default: all three)")
    p.add_argument("--questions", type=int, help="first N questions of each set (the corpus is always whole)")
    p.add_argument("--embedders", nargs="+", help="embedders (default: wordllama, hashing, and minilm when the extra `local` is installed; quick: wordllama)")
    p.add_argument("--tune", action="store_true", help="run the graph-settings grid on the train files instead")


# --- ingestion ------------------------------------------------------------------------------


@dataclass
class Ingested:
    """Where each paragraph went: chunk id -> paragraph key (and document id -> key when a
    document holds one paragraph)."""

    chunk_to_key: dict[str, str] = field(default_factory=dict)
    doc_to_key: dict[str, str] = field(default_factory=dict)
    chunks: int = 0
    path: str = ""

    @property
    def chunk_ids(self) -> list[str]:
        return list(self.chunk_to_key)

    def key_of(self, result: Any) -> str | None:
        return self.chunk_to_key.get(result.id) or self.doc_to_key.get(result.document_id)


def chunk_text(p: Paragraph) -> str:
    """What is stored and embedded for a paragraph: its title on the first line, then the
    text (as HippoRAG indexes these sets); the title is in the chunk metadata as well."""
    return f"{p.title}\n{p.text}"


#: paragraphs per document when the quality benchmark loads a corpus (retrieval works on chunks,
#: so the grouping changes no result; it only saves one transaction per paragraph)
GROUP = 100


def ingest_paragraphs(store: Neo4jStore, embedder: Any, paragraphs: Sequence[Paragraph], *, via: str = "ingestor") -> Ingested:
    """Write a corpus, one chunk per paragraph, its title in the chunk metadata.

    ``via="ingestor"``: the user's path, ``Ingestor.ingest_text`` per paragraph (one document
    each: chunk, embed, store), when the Ingestor exists. ``via="store"`` (or no Ingestor):
    ``store_document`` with documents of ``GROUP`` paragraphs, embedded in batches of 64.
    """
    out = Ingested()
    try:
        from kgrag_neo4j.ingestion.ingestor import Ingestor
    except ImportError:
        Ingestor = None  # noqa: N806
    if via == "ingestor" and Ingestor is not None:
        ingestor = Ingestor(store, embedder)
        for p in paragraphs:
            r = ingestor.ingest_text(chunk_text(p), source=p.key, title=p.title, metadata={"title": p.title})
            out.doc_to_key[r.document_id] = p.key
            out.chunks += r.chunk_count
        out.path = "Ingestor.ingest_text, one document per paragraph"
        return out
    store.ensure_embedder(embedder.name, embedder.dimensions)
    for g, start in enumerate(range(0, len(paragraphs), GROUP)):
        group = paragraphs[start:start + GROUP]
        vectors: list[list[float]] = []
        for b in range(0, len(group), 64):
            vectors.extend(embedder.embed([chunk_text(p) for p in group[b:b + 64]], input_type="document"))
        doc_id = ids.document_id(store.namespace, f"corpus/{g}")
        chunks = []
        for i, (p, v) in enumerate(zip(group, vectors)):
            text = chunk_text(p)
            chunk = Chunk(id=ids.chunk_id(doc_id, "flat", i, text), document_id=doc_id, content=text, chunk_index=i,
                          embedding=v, token_count=len(text.split()), metadata={"title": p.title, "key": p.key})
            chunks.append(chunk)
            out.chunk_to_key[chunk.id] = p.key
        store.store_document(Document(id=doc_id, source=f"corpus/{g}", title=f"paragraphs {start}-{start + len(group) - 1}",
                                      content_hash=ids.content_hash("\x1f".join(p.key for p in group))), chunks)
        out.chunks += len(chunks)
    out.path = f"store_document, {GROUP} paragraphs (chunks) per document"
    return out


# --- entity-derived chunk edges (pure) ------------------------------------------------------


def entity_chunk_edges(mentions: dict[str, list[str]], *, max_chunks: int = ENTITY_MAX_CHUNKS,
                       per_chunk: int = ENTITY_EDGES_PER_CHUNK) -> list[ChunkEdge]:
    """``references`` edges between chunks that mention the same entity.

    An entity found in ``df`` chunks adds ``1 / (df - 1)`` to the weight of each pair it
    links (a name only two paragraphs share links them at full weight; a common one barely),
    capped at 1.0; entities in more than ``max_chunks`` chunks link nothing. Each chunk keeps
    its ``per_chunk`` heaviest edges (one edge per pair, lower id first; retrieval follows
    edges both ways).
    """
    by_entity: dict[str, list[str]] = defaultdict(list)
    for chunk, entities in mentions.items():
        for e in set(entities):
            by_entity[e].append(chunk)
    weight: dict[tuple[str, str], float] = defaultdict(float)
    for chunks in by_entity.values():
        df = len(chunks)
        if df < 2 or df > max_chunks:
            continue
        chunks = sorted(chunks)
        for i, a in enumerate(chunks):
            for b in chunks[i + 1:]:
                weight[(a, b)] += 1.0 / (df - 1)
    best: dict[str, list[tuple[float, str, str]]] = defaultdict(list)
    for (a, b), w in weight.items():
        best[a].append((w, a, b))
        best[b].append((w, a, b))
    keep: set[tuple[str, str]] = set()
    for chunk, edges in best.items():
        for w, a, b in sorted(edges, key=lambda x: (-x[0], x[1], x[2]))[:per_chunk]:
            keep.add((a, b))
    return [ChunkEdge(a, b, RelationType.REFERENCES, round(min(1.0, weight[(a, b)]), 4),
                      description="shared entities", origin="entities") for a, b in sorted(keep)]


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
    totals = defaultdict(float)
    times = []
    for q in data.questions:
        t0 = time.perf_counter()
        results = retrieve(q.text)
        times.append(time.perf_counter() - t0)
        for k, v in score_question(_ranked_keys(results, ingested), q.gold).items():
            totals[k] += v
    n = len(data.questions)
    return {**{k: round(v / n, 4) for k, v in totals.items()}, "questions": n,
            "ms_per_query": round(1000 * sum(times) / n, 2)}


# --- configurations -----------------------------------------------------------------------------


def _embedder(name: str) -> Any:
    from kgrag_neo4j.providers import select_embedder

    return select_embedder(name)


def _configs(store: Neo4jStore, embedder: Any, *, entities: bool) -> list[tuple[str, str, Callable[[str], list[Any]] | None]]:
    """(name, settings, retrieve) per row; retrieve None = not available (reason in settings)."""
    from kgrag_neo4j.retrieval.retrievers import GraphRetriever, HybridRetriever, VectorRetriever

    rows: list[tuple[str, str, Callable[[str], list[Any]] | None]] = []
    vector = VectorRetriever(store, embedder)
    rows.append(("vector", "VectorRetriever, top 5", lambda q: vector.retrieve(q, TOP_K)))
    hybrid = HybridRetriever(store, embedder)
    rows.append(("hybrid", "HybridRetriever, RRF keyword weight 0.3, overfetch 3", lambda q: hybrid.retrieve(q, TOP_K)))
    sim = GraphRetriever(store, embedder, relation_filter=("similar_to",), seed_top_k=SIMILARITY_SEEDS, max_hops=GRAPH_HOPS,
                         bidirectional=True)
    rows.append(("graph, similarity edges",
                 f"GraphRetriever one statement, {SIMILARITY_SEEDS} seeds, {GRAPH_HOPS} hop, both directions, similar_to edges "
                 f"(build_similarity_edges top {SIMILARITY_TOP_K}, cosine >= {SIMILARITY_THRESHOLD})",
                 lambda q: sim.retrieve(q, TOP_K)))
    if entities:
        ent = GraphRetriever(store, embedder, relation_filter=("references",), seed_top_k=ENTITY_SEEDS, max_hops=GRAPH_HOPS,
                             bidirectional=True)
        rows.append(("graph, entity edges",
                     f"GraphRetriever one statement, {ENTITY_SEEDS} seeds, {GRAPH_HOPS} hop, both directions, references edges "
                     f"between paragraphs sharing an offline-extracted entity (entity in <= {ENTITY_MAX_CHUNKS} paragraphs; "
                     f"weight sum 1/(df-1); {ENTITY_EDGES_PER_CHUNK} per paragraph)",
                     lambda q: ent.retrieve(q, TOP_K)))
        try:
            from kgrag_neo4j.retrieval.entity import EntityGraphRetriever

            eg = EntityGraphRetriever(store, embedder)
            rows.append(("entity-boosted", "EntityGraphRetriever, seed defaults (3 query entities, 1 hop, boosts 0.3 / 0.1)",
                         lambda q: eg.retrieve(q, TOP_K)))
        except Exception as exc:  # not there yet: say so in the table
            rows.append(("entity-boosted", f"not available: {exc}", None))
        try:
            from kgrag_neo4j.retrieval.local_search import LocalSearchRetriever

            ls = LocalSearchRetriever(store, embedder)
            rows.append(("local search", "LocalSearchRetriever, seed defaults (10 entities, 4000-token budget)",
                         lambda q: ls.retrieve(q, TOP_K)))
        except Exception as exc:
            rows.append(("local search", f"not available: {exc}", None))
    return rows


def _build_graphs(store: Neo4jStore, embedder: Any, ingested: Ingested, *, threshold: float = SIMILARITY_THRESHOLD,
                  entities: bool = True) -> dict[str, Any]:
    info: dict[str, Any] = {}
    t0 = time.perf_counter()
    info["similarity_edges"] = store.build_similarity_edges(ingested.chunk_ids, top_k=SIMILARITY_TOP_K, threshold=threshold)
    info["similarity_seconds"] = round(time.perf_counter() - t0, 1)
    if not entities:
        return info
    try:
        from kgrag_neo4j.entities.pipeline import build_entities
    except ImportError as exc:
        info["entities"] = f"not available: {exc}"
        return info
    t0 = time.perf_counter()
    built = build_entities(store, embedder)
    info["entities"] = {"entities": built.entities, "mentions": built.mentions, "relations": built.relations,
                        "seconds": round(time.perf_counter() - t0, 1)}
    mentions = store.chunk_mentions(ingested.chunk_ids)
    edges = entity_chunk_edges(mentions)
    info["entity_edges"] = store.store_edges(edges) if edges else 0
    return info


def one_set(srv: BenchServer, data: Dataset, embedder_name: str) -> dict[str, Any]:
    embedder = _embedder(embedder_name)
    clear_database(srv.driver, drop_vector_indexes=True)
    store = srv.store(namespace=data.name.replace("2", "two"))
    t0 = time.perf_counter()
    ingested = ingest_paragraphs(store, embedder, data.paragraphs, via="store")
    ingest_s = time.perf_counter() - t0
    print(f"    {data.name} / {embedder.name}: {len(data.paragraphs):,} paragraphs ingested in {ingest_s:.0f}s ({ingested.path})", flush=True)
    graphs = _build_graphs(store, embedder, ingested)
    print(f"    graphs: {graphs}", flush=True)
    rows = {}
    for name, settings, retrieve in _configs(store, embedder, entities=True):
        rows[name] = {"settings": settings, **(evaluate(retrieve, data, ingested) if retrieve else {"available": False})}
    return {"embedder": embedder.name, "paragraphs": len(data.paragraphs), "questions": len(data.questions),
            "ingest_seconds": round(ingest_s, 1), "ingest_path": ingested.path, "graphs": graphs, "rows": rows}


def _print_set(name: str, res: dict[str, Any]) -> None:
    vec = res["rows"]["vector"]
    table = []
    for row, m in res["rows"].items():
        if "recall@5" not in m:
            table.append([row, None, None, None, None, m["settings"][:60]])
            continue
        table.append([row, m["recall@2"], m["recall@5"], m["all@5"], round(m["recall@5"] - vec["recall@5"], 4), m["ms_per_query"]])
    print_table(f"{name}: {res['questions']} questions, {res['paragraphs']:,} paragraphs, embedder {res['embedder']}",
                ["configuration", "recall@2", "recall@5", "all-gold@5", "R@5 - vector", "ms/query"], table)


def tune(args: argparse.Namespace) -> dict[str, Any]:
    """The grid the graph settings were chosen from, on the train files only.

    It runs offline, in numpy, with the retrievers' formulas (seed score 0.7 x normalised
    cosine + 0.3; a neighbour first reached at hop h through an edge of weight w scores
    0.3 x w x decay[h], decay 0.7 / 0.5; both directions), the similarity edges of
    ``build_similarity_edges`` and the entity edges of ``entity_chunk_edges`` over the
    offline extractor's mentions: choosing settings needs no database.
    """
    import numpy as np

    from kgrag_neo4j.entities.extract_offline import OfflineEntityExtractor

    out: dict[str, Any] = {}
    embedder = _embedder("wordllama")
    for set_name in ("musique", "hotpotqa"):
        data = load(set_name, split="train")
        texts = [chunk_text(p) for p in data.paragraphs]
        keys = [p.key for p in data.paragraphs]
        P = np.asarray(embedder.embed(texts), dtype=np.float64)
        Q = np.asarray(embedder.embed([q.text for q in data.questions], input_type="query"), dtype=np.float64)
        S = Q @ P.T
        C = P @ P.T
        np.fill_diagonal(C, -np.inf)
        graphs: dict[str, dict[int, dict[int, float]]] = {}
        for threshold in (0.5, 0.6, 0.7, 0.8):
            adj: dict[int, dict[int, float]] = defaultdict(dict)
            for i in range(len(keys)):
                for j in np.argsort(-C[i])[:SIMILARITY_TOP_K]:
                    if C[i, j] >= threshold:
                        w = float(min(1.0, C[i, j]))
                        adj[i][int(j)] = max(adj[i].get(int(j), 0.0), w)
                        adj[int(j)][i] = max(adj[int(j)].get(i, 0.0), w)
            graphs[f"similarity {threshold}"] = adj
        units = [Chunk(id=k, document_id="d", content=t) for k, t in zip(keys, texts)]
        found = OfflineEntityExtractor(namespace="tune").extract(units)
        mentions: dict[str, list[str]] = defaultdict(list)
        for m in found.mentions:
            mentions[m.chunk_id].append(m.entity_id)
        index = {k: i for i, k in enumerate(keys)}
        adj = defaultdict(dict)
        for e in entity_chunk_edges(mentions):
            a, b = index[e.source_id], index[e.target_id]
            adj[a][b] = adj[b][a] = e.weight
        graphs["entities"] = adj
        for graph_name, adj in graphs.items():
            for seeds in (2, 3, 4):
                for hops in (1, 2):
                    totals: dict[str, float] = defaultdict(float)
                    for qi, q in enumerate(data.questions):
                        order = [int(j) for j in np.argsort(-S[qi])[:seeds]]
                        scored = {j: 0.7 * (1 + S[qi, j]) / 2 + 0.3 for j in order}
                        frontier, seen = order, set(order)
                        for hop in range(1, hops + 1):
                            reached: dict[int, float] = {}
                            for f in frontier:
                                for n, w in adj.get(f, {}).items():
                                    if n not in seen:
                                        reached[n] = max(reached.get(n, 0.0), 0.3 * w * (0.7 if hop == 1 else 0.5))
                            scored.update(reached)
                            seen.update(reached)
                            frontier = list(reached)
                        top = [keys[j] for j, _ in sorted(scored.items(), key=lambda x: (-x[1], keys[x[0]]))[:TOP_K]]
                        for k, v in score_question(top, q.gold).items():
                            totals[k] += v / len(data.questions)
                    name = f"{set_name} {graph_name} seeds={seeds} hops={hops}"
                    out[name] = {k: round(v, 4) for k, v in totals.items()}
        totals = defaultdict(float)
        for qi, q in enumerate(data.questions):
            top = [keys[j] for j in np.argsort(-S[qi])[:TOP_K]]
            for k, v in score_question(top, q.gold).items():
                totals[k] += v / len(data.questions)
        out[f"{set_name} vector"] = {k: round(v, 4) for k, v in totals.items()}
    for name, m in sorted(out.items()):
        print(f"    {name:<45} recall@2 {m['recall@2']:.3f}  recall@5 {m['recall@5']:.3f}  all@5 {m['all@5']:.3f}")
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    if args.tune:
        results = {"tune": tune(args)}
        write_results("quality-tune", results, args.json)
        return results
    sets = args.sets or (["musique"] if args.quick else list(SETS))
    questions = args.questions or (100 if args.quick else None)
    embedders = list(args.embedders or (["wordllama"] if args.quick else ["wordllama", "hashing"]))
    notes = {}
    try:
        import sentence_transformers  # noqa: F401
        # MiniLM embeds every corpus on the CPU: full runs only, unless asked for
        if "minilm" not in embedders and not args.embedders and not args.quick:
            embedders.append("minilm")
    except ImportError:
        notes["minilm"] = "sentence-transformers is not installed (extra `local`), so no MiniLM rows"
    head = print_header("quality", neo4j_version="(fresh server)", embedder=", ".join(embedders),
                        sizes={s: f"whole corpus, {questions or 'all'} questions" for s in sets},
                        extra={"protocol": "one chunk per paragraph, top 5 per question, recall@2 / recall@5 / all-gold@5", **notes})
    results: dict[str, Any] = {**head, "sets": {}}
    with bench_server(heap="2g", pagecache="1g") as srv:
        results["neo4j"] = srv.neo4j_version
        for set_name in sets:
            data = load(set_name).subset(questions)
            results["sets"][set_name] = {}
            for embedder_name in embedders:
                res = one_set(srv, data, embedder_name)
                results["sets"][set_name][embedder_name] = res
                _print_set(set_name, res)
                write_results(result_name("quality", args), results, args.json)
    return results
