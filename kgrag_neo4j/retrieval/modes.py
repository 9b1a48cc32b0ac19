"""Retrieval modes by name: the retriever behind each, and the options each one honours.

``build_retriever("graph", store, embedder, max_hops=1)`` is what ``kgrag search --mode graph
--hops 1`` runs. Options are the retrievers' own keyword names; one a mode cannot honour is
refused with a message naming the modes that take it, never silently dropped
(:func:`check_options`). Options not given keep the retriever's defaults.

``search("graph", store, embedder, "how ...?", 5, max_hops=1)`` builds that retriever and runs
it: what ``kgrag search`` calls. In local mode the response carries the context the results
came from (entities, relationships, community reports), which the command prints.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError, InputError
from ..protocols import EmbeddingProvider, EntityBoostReader, LocalContextReader, Reranker, Store
from ..types import ChunkFilter, RetrievalResult
from ..validation import check_int

if TYPE_CHECKING:
    from .local_search import LocalContext

__all__ = ["MODES", "MODE_OPTIONS", "SearchResponse", "build_retriever", "check_options", "search"]

#: every retrieval mode, in the order ``kgrag search --help`` lists them
MODES = ("vector", "hybrid", "graph", "ppr", "entity", "local")

#: the options each mode honours (besides ``filters``, which every mode honours), by the
#: keyword names of its retriever
MODE_OPTIONS: Mapping[str, frozenset[str]] = {
    "vector": frozenset({"min_score"}),
    "hybrid": frozenset({"min_score", "reranker", "keyword_weight", "overfetch"}),
    "graph": frozenset({"reranker", "max_hops", "bidirectional", "relation_filter", "seed_top_k", "blend",
                        "graph_weight", "vector_weight", "hop_decay", "min_traversal_score", "seed_keyword_weight",
                        "entity_seed_weight", "entity_max_chunks", "refine_seeds", "vector_candidates"}),
    "ppr": frozenset({"seed_top_k", "damping", "entity_share", "max_entity_chunks"}),
    "entity": frozenset({"max_hops", "entity_boost_direct", "entity_boost_indirect", "query_entities_top_k",
                         "score_scale", "query_entity_floor", "named_query_entities"}),
    "local": frozenset({"min_similarity", "top_k_entities", "top_k_relationships", "top_k_community_reports",
                        "top_k_text_units", "max_text_unit_tokens"}),
}


def check_options(mode: str, given: Sequence[str]) -> None:
    """Refuse options ``mode`` cannot honour: ``ConfigurationError`` naming them and the modes
    that take each."""
    if mode not in MODE_OPTIONS:
        raise ConfigurationError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
    bad = [name for name in given if name not in MODE_OPTIONS[mode]]
    if bad:
        parts = []
        for name in bad:
            takers = [m for m in MODES if name in MODE_OPTIONS[m]]
            parts.append(f"{name} (taken by: {', '.join(takers) or 'no mode'})")
        raise ConfigurationError(f"mode {mode!r} cannot honour " + "; ".join(parts))


def build_retriever(
    mode: str,
    store: Store,
    embedder: EmbeddingProvider,
    *,
    filters: Sequence[ChunkFilter] = (),
    reranker: Reranker | None = None,
    **options: Any,
) -> Any:
    """The retriever of ``mode`` with ``options`` (the retriever's keyword names; absent ones
    keep its defaults). Options the mode cannot honour are refused (:func:`check_options`).
    The embedder of the model a namespace records is
    ``providers.select.embedder_for_namespace(None, store.embedding_model())``."""
    given = sorted(options) + (["reranker"] if reranker is not None else [])
    check_options(mode, given)
    filters = tuple(filters)
    if reranker is not None:
        options["reranker"] = reranker
    if mode == "vector":
        from .retrievers import VectorRetriever

        return VectorRetriever(store, embedder, filters=filters, **options)
    if mode == "hybrid":
        from .retrievers import HybridRetriever

        return HybridRetriever(store, embedder, filters=filters, **options)
    if mode == "graph":
        from .retrievers import GraphRetriever

        return GraphRetriever(store, embedder, filters=filters, **options)
    if mode == "ppr":
        from .ppr import PPRRetriever

        return PPRRetriever(store, embedder, filters=filters, **options)
    if mode == "entity":
        from .entity import EntityGraphRetriever

        if not isinstance(store, EntityBoostReader):
            raise ConfigurationError("entity mode needs a store with the entity capability (Neo4jStore)")
        return EntityGraphRetriever(store, embedder, filters=filters, **options)
    from .local_search import LocalSearchRetriever

    if not isinstance(store, LocalContextReader):
        raise ConfigurationError("local mode needs a store with the entity capability (Neo4jStore)")
    return LocalSearchRetriever(store, embedder, filters=filters, **options)


@dataclass(frozen=True, slots=True)
class SearchResponse:
    """What :func:`search` found: the results, best first, and in local mode the context
    (entities, relationships, community reports, text units) they were taken from."""

    mode: str
    results: tuple[RetrievalResult, ...]
    context: LocalContext | None = None

    def to_json(self) -> dict[str, Any]:
        """The context's fields (local mode) and ``results``, each result as its JSON."""
        head = self.context.to_json() if self.context is not None else {}
        return {**head, "results": [r.to_json() for r in self.results]}

    def to_text(self, *, max_chars: int = 400) -> str:
        """For a terminal: the local context as prompt text, else the results with their
        scores, chunk ids and how graph-found ones were reached (``format_knowledge``)."""
        if self.context is not None:
            return self.context.to_text()
        from .format import format_knowledge

        return format_knowledge(list(self.results), show_scores=True, show_ids=True, max_chars=max_chars)


def search(
    mode: str,
    store: Store,
    embedder: EmbeddingProvider,
    query: str,
    top_k: int = 5,
    *,
    filters: Sequence[ChunkFilter] = (),
    reranker: Reranker | None = None,
    **options: Any,
) -> SearchResponse:
    """The ``top_k`` results of ``query`` by the retriever of ``mode`` built with ``options``
    (:func:`build_retriever`: an option the mode cannot honour is refused)."""
    retriever = build_retriever(mode, store, embedder, filters=filters, reranker=reranker, **options)
    if mode == "local":
        # one read gives both the context and the results drawn from it
        check_int(top_k, "top_k", minimum=1, error=InputError)
        context = retriever.context(query)
        return SearchResponse(mode, tuple(retriever.retrieve_from(context, top_k)), context)
    return SearchResponse(mode, tuple(retriever.retrieve(query, top_k)))


def graph_view(
    store: Store,
    embedder: EmbeddingProvider,
    query: str,
    top_k: int = 5,
    *,
    filters: Sequence[ChunkFilter] = (),
    **options: Any,
) -> dict[str, Any]:
    """The graph retrieval of ``query`` as a graph (nodes, relationships, results), with the
    options of ``--mode graph`` (:func:`build_retriever`)."""
    retriever = build_retriever("graph", store, embedder, filters=filters, **options)
    return retriever.graph_view(query, top_k)
