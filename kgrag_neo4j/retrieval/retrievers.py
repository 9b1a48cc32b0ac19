"""The chunk retrievers: vector, hybrid (RRF) and graph.

They orchestrate store and provider calls; every formula lives in ``scoring.py``. Optional
store capabilities are discovered with ``isinstance`` and their absence degrades silently
(graph to vector, hybrid to vector). Each body is written once as steps (``steps.py``): ``retrieve`` runs it
with plain calls, ``await aretrieve`` on the store's async reads.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from typing import Any

from ..entities.gazetteer import query_name_keys
from ..errors import ConfigurationError, ConnectionFailed, InputError
from ..options import GraphOptions
from ..protocols import (
    ChunkScorer,
    EmbedderRegistry,
    EmbeddingProvider,
    GraphStore,
    GraphTraverser,
    GraphViewer,
    KeywordSearcher,
    QueryEntitySeeder,
    Reranker,
    Store,
)
from ..score_parts import explain_graph_score
from ..steps import Call, Gather, Steps, run_steps, twin_methods
from ..tracing import Tracer, TracerOption, check_tracer, span
from ..types import GRAPH_BLENDS, NATIVE_MAX_HOPS, ChunkFilter, RetrievalResult
from ..validation import MAX_TOP_K, check_int, check_number
from .declaration import declare_mode, mode_option
from .scoring import (
    blend_and_rank,
    expand_per_hop,
    propagate_seed_score,
    reciprocal_rank_fusion,
    resolve_parents,
)

__all__ = [
    "GRAPH_MODE",
    "HYBRID_MODE",
    "VECTOR_MODE",
    "GraphRetriever",
    "HybridRetriever",
    "VectorRetriever",
    "Tracer",
    "embed_query",
]

log = logging.getLogger("kgrag_neo4j.retrieval")


def _check_query(query: Any, top_k: Any) -> None:
    if not isinstance(query, str) or not query.strip():
        raise InputError("query must be non-empty text")
    check_int(top_k, "top_k", minimum=1, maximum=MAX_TOP_K, error=InputError)


def embed_query(store: object, embedder: EmbeddingProvider, query: str) -> Steps[list[float]]:
    """(Steps) The query's vector, once the store has agreed it can compare it with what it holds.

    A store that records the embedding model of its namespace (``check_embedder``) refuses
    another model, whose vectors would give meaningless hits; it remembers a model it accepted,
    so this costs a round trip only the first time. A query that is not valid Unicode (a lone
    surrogate, as a non-UTF-8 command line gives) is refused here, before any provider sees it.
    """
    try:
        query.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InputError(f"the query is not valid Unicode text (at character {exc.start + 1})") from None
    if isinstance(store, EmbedderRegistry):
        yield from Call.of(store.check_embedder, embedder.name, embedder.dimensions)
    vectors = yield from Call.of(embedder.embed, [query], input_type="query")
    if not vectors:
        raise InputError("the embedder returned no vector for the query")
    return vectors[0]


def _resolve_parent_results(store: Store, results: list[RetrievalResult]) -> Steps[list[RetrievalResult]]:
    """Parent-child resolution: a matched child becomes its parent; of siblings only the best survives.
    A failing parent lookup leaves the results as they are."""
    parent_ids = sorted({r.parent_id for r in results if r.parent_id})
    if not parent_ids:
        return results
    try:
        parents = {c.id: c for c in (yield from Call.of(store.get_chunks_by_ids, parent_ids))}
    except Exception as exc:  # degrade: children are still useful answers
        log.warning("parent lookup failed, returning children: %s", exc)
        return results
    return resolve_parents(results, parents)


class _Traced:
    """Every ``retrieve`` is a ``retriever.retrieve`` span (``kgrag_neo4j.tracing``): an
    OpenTelemetry span, or start/end events of a callable tracer."""

    tracer: TracerOption
    kind: str

    def _span(self, **attrs: Any):
        return span(self.tracer, "retriever.retrieve", {"retriever.type": self.kind, **attrs})

    def _retrieve(self, query: str, top_k: int) -> Steps[Any]:
        """What ``_span_results`` turns into the results (a subclass may return more)."""
        raise NotImplementedError

    def _span_attributes(self, top_k: int) -> dict[str, Any]:
        return {"top_k": top_k}

    def _span_results(self, sp: Any, found: Any) -> list[RetrievalResult]:
        """Record what ``_retrieve`` found on the span; return the results. (A body may return
        more than the results, for the span: ``PPRRetriever``'s does.)"""
        sp.set("result_count", len(found))
        return found

    def _traced(self, query: str, top_k: int = 5) -> Steps[list[RetrievalResult]]:
        """The ``top_k`` best results for ``query``; ``aretrieve`` reads on the store's async driver."""
        _check_query(query, top_k)
        with self._span(**self._span_attributes(top_k)) as sp:
            return self._span_results(sp, (yield from self._retrieve(query, top_k)))

    retrieve, aretrieve = twin_methods(_traced, name="retrieve")


class VectorRetriever(_Traced):
    """Plain vector search (the floor every other retriever is measured against)."""

    kind = "vector"

    def __init__(
        self,
        store: Store,
        embedder: EmbeddingProvider,
        *,
        filters: Sequence[ChunkFilter] = (),
        min_score: float = 0.0,
        resolve_parents: bool = True,
        tracer: TracerOption = None,
    ):
        self.store, self.embedder = store, embedder
        self.filters, self.min_score = tuple(filters), float(min_score)
        self.resolve_parents, self.tracer = resolve_parents, check_tracer(tracer)

    def _retrieve(self, query: str, top_k: int) -> Steps[list[RetrievalResult]]:
        embedding = yield from embed_query(self.store, self.embedder, query)
        results = yield from Call.of(self.store.search_chunks, embedding, top_k, self.filters)
        if self.resolve_parents:
            results = yield from _resolve_parent_results(self.store, results)
        results = [r for r in results if r.score >= self.min_score][:top_k]
        return results


VECTOR_MODE = declare_mode(
    "vector",
    VectorRetriever,
    description="semantic (embedding) search over the passages",
    options={"min_score": "drop results scoring below this."},
)


class HybridRetriever(_Traced):
    """Vector + keyword (when the store is a ``KeywordSearcher``) fused with RRF,
    parent-child resolution, optional reranker, minimum score, filters on both paths.

    Defaults: ``keyword_weight`` 0.3, ``overfetch`` 3,
    ``reranker`` None, ``min_score`` 0. The two searches run concurrently (two round trips,
    latency of the slower); the fused score is normalised RRF in [0, 1].
    """

    kind = "hybrid"

    def __init__(
        self,
        store: Store,
        embedder: EmbeddingProvider,
        *,
        keyword_weight: float = 0.3,
        overfetch: int = 3,
        reranker: Reranker | None = None,
        min_score: float = 0.0,
        filters: Sequence[ChunkFilter] = (),
        tracer: TracerOption = None,
    ):
        check_number(keyword_weight, "keyword_weight", minimum=0.0, maximum=1.0)
        check_int(overfetch, "overfetch", minimum=1)
        self.store, self.embedder = store, embedder
        self.keyword_weight, self.overfetch = float(keyword_weight), overfetch
        self.reranker, self.min_score = reranker, float(min_score)
        self.filters, self.tracer = tuple(filters), check_tracer(tracer)

    def _retrieve(self, query: str, top_k: int) -> Steps[list[RetrievalResult]]:
        embedding = yield from embed_query(self.store, self.embedder, query)
        fetch_k = min(max(top_k * self.overfetch, top_k), MAX_TOP_K)
        keyword: list[RetrievalResult] = []
        if isinstance(self.store, KeywordSearcher) and self.keyword_weight > 0:
            # the two searches at once: two round trips, latency of the slower
            vector, found = yield from Gather.of(
                Call.of(self.store.search_chunks, embedding, fetch_k, self.filters),
                Call.of(self.store.search_chunks_keyword, query, fetch_k, self.filters),
            )
            if isinstance(vector, BaseException):
                raise vector
            if isinstance(found, BaseException):  # seed: keyword failure falls back to vector-only
                log.warning("keyword search failed, falling back to vector-only: %s", found)
            else:
                keyword = found
        else:
            vector = yield from Call.of(self.store.search_chunks, embedding, fetch_k, self.filters)
        results = fuse_results(vector, keyword, keyword_weight=self.keyword_weight if keyword else 0.0)
        results = yield from _resolve_parent_results(self.store, results)
        if self.reranker is not None:
            results = yield from Call.of(self.reranker.rerank, query, results, top_k)
        if self.min_score > 0:
            results = [r for r in results if r.score >= self.min_score]
        return results[:top_k]


HYBRID_MODE = declare_mode(
    "hybrid",
    HybridRetriever,
    summary="vector + full text",
    description="semantic and keyword search fused (a good default)",
    options={
        "min_score": "drop results scoring below this.",
        "reranker": "reorders the fused results before the minimum score applies.",
        "keyword_weight": "keyword share of the rank fusion.",
        "overfetch": "candidates fetched per result before fusion.",
    },
)


def fuse_results(
    vector: Sequence[RetrievalResult], keyword: Sequence[RetrievalResult], *, keyword_weight: float
) -> list[RetrievalResult]:
    """RRF over two result lists, keeping each result's component scores."""
    by_id: dict[str, RetrievalResult] = {}
    for r in list(vector) + list(keyword):
        if r.id in by_id:
            mine = by_id[r.id].scores
            if r.scores.keyword is not None:
                mine.keyword = r.scores.keyword
            if r.scores.vector is not None:
                mine.vector = r.scores.vector
        else:
            by_id[r.id] = dataclasses.replace(r, scores=dataclasses.replace(r.scores))
    fused = reciprocal_rank_fusion([r.id for r in vector], [r.id for r in keyword], keyword_weight=keyword_weight)
    out = []
    for chunk_id, score in fused:
        r = by_id[chunk_id]
        r.score = score
        r.scores.fused = score
        out.append(r)
    return out


class GraphRetriever(_Traced):
    """Hop-decayed graph traversal: seeds from vector (or RRF hybrid) search, expansion over chunk edges with hop
    decay, blended scores, graph context on every graph-found result.

    ``blend="propagate"`` (the default) lets a graph-found chunk that is close to the query
    and tied to a strong seed outrank a weak seed, and seeds the chunks that mention an entity
    the query names; ``blend="seed"`` is the original formula exactly (see ``GraphOptions``).

    On a store with the native capability (``GraphTraverser``, i.e. ``Neo4jStore``) the whole
    retrieval is one Cypher statement; on any other ``GraphStore`` it is the original per-hop
    ``get_edges`` loop (same results, one round trip per hop); on a plain ``Store`` it is
    vector-only. A traversal that fails returns the seeds as they are.
    """

    kind = "graph"

    def __init__(
        self,
        store: Store,
        embedder: EmbeddingProvider,
        *,
        options: GraphOptions | None = None,
        filters: Sequence[ChunkFilter] = (),
        reranker: Reranker | None = None,
        logger: logging.Logger | None = None,
        tracer: TracerOption = None,
        native: bool | None = None,
        **option_overrides: Any,
    ):
        base = options or GraphOptions()
        self.options = dataclasses.replace(base, **option_overrides) if option_overrides else base
        self.store, self.embedder = store, embedder
        self.filters, self.reranker = tuple(filters), reranker
        self.log = logger or log
        self.tracer = check_tracer(tracer)
        self.native = native
        only_native = self.options.one_statement_only
        if only_native and not self.uses_native:
            # a flag the per-hop loop cannot honour is refused, not ignored
            raise ConfigurationError(
                f"{' and '.join(only_native)} need the one-statement graph retrieval (a Neo4jStore, "
                f"max_hops at most {NATIVE_MAX_HOPS}, native not False)"
            )

    @property
    def uses_native(self) -> bool:
        if self.native is False:
            return False
        return isinstance(self.store, GraphTraverser) and self.options.max_hops <= NATIVE_MAX_HOPS

    def _span_attributes(self, top_k: int) -> dict[str, Any]:
        return {"top_k": top_k, "native": self.uses_native, "max_hops": self.options.max_hops}

    def _span_results(self, sp: Any, found: Any) -> list[RetrievalResult]:
        sp.set("result_count", len(found))
        sp.set("graph_found", sum(1 for r in found if r.graph_context))
        return found

    def _retrieve(self, query: str, top_k: int) -> Steps[list[RetrievalResult]]:
        embedding = yield from embed_query(self.store, self.embedder, query)
        if self.uses_native:
            try:
                results = yield from self._native(query, embedding, top_k)
            except (InputError, ConnectionFailed):
                raise  # bad input, or no server at all: the per-hop fallback cannot help
            except Exception as exc:
                self.log.warning("native graph traversal failed, returning seeds only: %s", exc)
                results = yield from self._per_hop(query, embedding, top_k, traverse=False)
        else:
            results = yield from self._per_hop(query, embedding, top_k, traverse=isinstance(self.store, GraphStore))
        if self.reranker is not None:
            results = yield from Call.of(self.reranker.rerank, query, results, top_k)
        results = results[:top_k]
        return results

    def graph_view(self, query: str, top_k: int = 5) -> dict[str, Any]:
        """The retrieval as a graph, before any reranker: the store's ``graph_view`` (a
        Neo4jStore's, what Neo4j Browser draws with ``cypher/graph/retrieve_graph``) with the
        options and query keys ``retrieve`` uses: nodes, relationships and results."""
        _check_query(query, top_k)
        store = self.store
        if not self.uses_native or not isinstance(store, GraphViewer):
            raise ConfigurationError(
                f"the graph view needs the one-statement graph retrieval (a Neo4jStore, max_hops at most {NATIVE_MAX_HOPS})"
            )
        embedding = run_steps(embed_query(store, self.embedder, query))
        o = self.options
        if o.seed_keyword_weight > 0 and not isinstance(store, KeywordSearcher):
            o = dataclasses.replace(o, seed_keyword_weight=0.0)
        keys = query_name_keys(query) if o.entity_weight > 0 else []
        return store.graph_view(embedding, query, top_k, o, self.filters, entity_keys=keys)

    def _native(self, query: str, embedding: list[float], top_k: int) -> Steps[list[RetrievalResult]]:
        o = self.options
        store = self.store
        assert isinstance(store, GraphTraverser)  # uses_native
        if o.seed_keyword_weight > 0 and not isinstance(store, KeywordSearcher):
            o = dataclasses.replace(o, seed_keyword_weight=0.0)  # no keyword index: vector seeds
        keys = query_name_keys(query) if o.entity_weight > 0 else []
        return (yield from Call.of(store.graph_retrieve, embedding, query, top_k, o, self.filters, entity_keys=keys))

    def _seeds(self, query: str, embedding: list[float]) -> Steps[list[RetrievalResult]]:
        o = self.options
        vector = yield from Call.of(self.store.search_chunks, embedding, o.seed_top_k, self.filters)
        if o.seed_keyword_weight <= 0 or not isinstance(self.store, KeywordSearcher):
            return vector
        try:
            keyword = yield from Call.of(self.store.search_chunks_keyword, query, o.seed_top_k, self.filters)
        except Exception as exc:
            self.log.warning("seed keyword search failed, using vector-only seeds: %s", exc)
            return vector
        if not keyword:
            return vector
        return fuse_results(vector, keyword, keyword_weight=o.seed_keyword_weight)[: o.seed_top_k]

    def _entity_seeds(self, query: str) -> Steps[dict[str, tuple[float, list[str]]]]:
        o = self.options
        if o.entity_weight <= 0 or not isinstance(self.store, QueryEntitySeeder):
            return {}
        try:
            return (
                yield from Call.of(
                    self.store.query_entity_chunks, query_name_keys(query), max_chunks=o.entity_max_chunks, filters=self.filters
                )
            )
        except Exception as exc:  # entity seeds add recall; without them the vector seeds still work
            self.log.warning("entity seeding failed, using the search seeds only: %s", exc)
            return {}

    def _similarity(self, embedding: list[float]):
        if not isinstance(self.store, ChunkScorer):
            return None
        store = self.store
        return lambda ids: store.score_chunks(embedding, ids)

    def _per_hop(self, query: str, embedding: list[float], top_k: int, *, traverse: bool) -> Steps[list[RetrievalResult]]:
        o = self.options
        seeds = yield from self._seeds(query, embedding)
        seed_by_id = {r.id: r for r in seeds}
        propagate = o.blend == "propagate"
        entity = (yield from self._entity_seeds(query)) if traverse or propagate else {}
        similarity = self._similarity(embedding)
        sims: dict[str, float] = {}
        if propagate:
            need = [
                cid for cid in list(seed_by_id) + list(entity) if cid not in seed_by_id or seed_by_id[cid].scores.vector is None
            ]
            scorer = self.store
            if need and isinstance(scorer, ChunkScorer):
                try:
                    sims = dict((yield from Call.of(scorer.score_chunks, embedding, need)))
                except Exception as exc:
                    self.log.warning("similarity of seeds failed, scoring them as unrelated: %s", exc)
            start: dict[str, float] = {}
            for cid in list(seed_by_id) + [c for c in entity if c not in seed_by_id]:
                seed = seed_by_id.get(cid)
                sim = seed.scores.vector if seed is not None and seed.scores.vector is not None else sims.get(cid, 0.5)
                start[cid] = propagate_seed_score(
                    sim, entity.get(cid, (0.0, []))[0], vector_weight=o.vector_weight, entity_seed_weight=o.entity_weight
                )
        else:
            start = {r.id: r.score for r in seeds}
        hits = {}
        store = self.store
        if traverse and start and isinstance(store, GraphStore):
            # the original per-hop loop for any GraphStore (in an event loop: in a worker thread)
            hits = yield from Call.of(
                expand_per_hop,
                start,
                store.get_edges,
                store.get_incoming_edges if o.bidirectional else None,
                o,
                similarity=similarity,
            )
        ranked = blend_and_rank(start, hits, top_k, vector_weight=o.vector_weight, graph_weight=o.graph_weight, blend=o.blend)
        need = [r.chunk_id for r in ranked if r.chunk_id not in seed_by_id]
        fetched = {}
        if need:
            try:
                fetched = {c.id: c for c in (yield from Call.of(self.store.get_chunks_by_ids, need))}
            except Exception as exc:  # seed: fetch error -> only seed chunks appear
                self.log.warning("fetching graph-found chunks failed, returning seeds only: %s", exc)
        out: list[RetrievalResult] = []
        for r in ranked:
            ent, names = entity.get(r.chunk_id, (0.0, []))
            hit = r.graph
            seed = seed_by_id.get(r.chunk_id)
            if seed is None and r.chunk_id not in fetched:
                continue
            if seed is not None:
                similarity = seed.scores.vector if seed.scores.vector is not None else sims.get(r.chunk_id)
            else:
                similarity = hit.similarity if hit is not None else sims.get(r.chunk_id)
            hop = hit.hop if hit is not None and seed is None else 0
            # a seed another seed's edge raised (propagate) says so; the seed blend never does
            via = hit.context if hit is not None and (seed is None or propagate) else None
            scores, explanation = explain_graph_score(
                o,
                score=r.score,
                hop=hop,
                similarity=similarity,
                seed_score=r.seed_score,
                keyword_score=seed.scores.keyword if seed is not None and o.seed_keyword_weight > 0 else None,
                entity_score=ent if hop == 0 else 0.0,
                entity_names=names if hop == 0 else (),
                via=via,
            )
            context = [hit.context] if hit is not None and seed is None else []
            if seed is not None:
                out.append(
                    dataclasses.replace(
                        seed, score=r.score, scores=scores, graph_context=context, explanation=[*seed.explanation, *explanation]
                    )
                )
                continue
            c = fetched[r.chunk_id]
            out.append(
                RetrievalResult(
                    id=c.id,
                    content=c.content,
                    score=r.score,
                    document_id=c.document_id,
                    source=c.source,
                    title=c.document_title,
                    chunk_index=c.chunk_index,
                    parent_id=c.parent_id,
                    metadata=c.metadata,
                    scores=scores,
                    graph_context=context,
                    explanation=explanation,
                )
            )
        return out


GRAPH_MODE = declare_mode(
    "graph",
    GraphRetriever,
    options_from=GraphOptions,
    summary="chunk edges, entities named in the query",
    description="seeds from semantic search, expanded along the links between passages (multi-hop questions)",
    follows_entities=True,
    options={
        "reranker": "reorders the results.",
        "max_hops": mode_option("hops to expand.", flag="hops"),
        "bidirectional": "follow incoming edges too.",
        "relation_filter": mode_option("relation kinds to follow, comma-separated.", flag="relations"),
        "seed_top_k": "seed chunks from the vector search.",
        "blend": mode_option(
            "'propagate' (relevance flows along edges; chunks mentioning an entity the query names seed too) or "
            "'seed' (the original formula: seeds always first).",
            choices=GRAPH_BLENDS,
        ),
        "graph_weight": "weight of graph scores in the blend.",
        "vector_weight": "weight of vector scores in the blend.",
        "hop_decay": "score factor per hop (index 0 = seed chunks).",
        "min_traversal_score": "edges lighter than this are not followed.",
        "seed_keyword_weight": "keyword share of the seed search (RRF); 0 = vector only.",
        "entity_seed_weight": "weight of the entities the query names (default 0.35 with --blend propagate, 0 with seed).",
        "entity_max_chunks": mode_option("an entity mentioned by more chunks than this seeds nothing.", flag=None),
        "refine_seeds": "also score the chunks one edge from the vector seeds by their cosine and keep the best, finding "
        "near copies the approximate index missed (default: on where one statement runs the retrieval).",
        "vector_candidates": "candidates asked of the vector index for the seeds (default: 4 per seed, at least 200).",
    },
)
