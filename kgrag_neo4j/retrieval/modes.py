"""Retrieval modes by name: the retriever behind each, and the options each one honours.

``build_retriever("graph", store, embedder, hops=1)`` is what ``kgrag search --mode graph
--hops 1`` runs. An option a mode cannot honour is refused with a message naming the modes
that take it, never silently dropped (:func:`check_options`).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..errors import ConfigurationError
from ..protocols import EmbeddingProvider, Reranker, Store
from ..types import ChunkFilter

__all__ = ["MODES", "MODE_OPTIONS", "build_retriever", "check_options"]

#: every retrieval mode, in the order ``kgrag search --help`` lists them
MODES = ("vector", "hybrid", "graph", "ppr", "entity", "local")

#: the options each mode honours (besides ``filters``, which every mode honours)
MODE_OPTIONS: Mapping[str, frozenset[str]] = {
    "vector": frozenset({"min_score"}),
    "hybrid": frozenset({"min_score", "reranker"}),
    "graph": frozenset({"reranker", "hops", "bidirectional", "relations", "seed_top_k", "blend"}),
    "ppr": frozenset({"seed_top_k", "damping"}),
    "entity": frozenset({"hops"}),
    "local": frozenset({"min_score"}),
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
    min_score: float | None = None,
    reranker: Reranker | None = None,
    hops: int | None = None,
    bidirectional: bool | None = None,
    relations: Sequence[str] | None = None,
    seed_top_k: int | None = None,
    blend: str | None = None,
    damping: float | None = None,
) -> Any:
    """The retriever of ``mode`` with the given options (None: the mode's default). Options the
    mode cannot honour are refused (see :func:`check_options`)."""
    given = {
        name for name, value in (
            ("min_score", min_score), ("reranker", reranker), ("hops", hops), ("bidirectional", bidirectional),
            ("relations", relations), ("seed_top_k", seed_top_k), ("blend", blend), ("damping", damping),
        ) if value is not None
    }
    check_options(mode, sorted(given))
    filters = tuple(filters)
    if mode == "vector":
        from .retrievers import VectorRetriever

        return VectorRetriever(store, embedder, filters=filters, **_some(min_score=min_score))
    if mode == "hybrid":
        from .retrievers import HybridRetriever

        return HybridRetriever(store, embedder, filters=filters, reranker=reranker, **_some(min_score=min_score))
    if mode == "graph":
        from .retrievers import GraphRetriever

        return GraphRetriever(
            store, embedder, filters=filters, reranker=reranker,
            **_some(max_hops=hops, bidirectional=bidirectional, seed_top_k=seed_top_k, blend=blend,
                    relation_filter=tuple(relations) if relations is not None else None),
        )
    if mode == "ppr":
        from .ppr import PPRRetriever

        return PPRRetriever(store, embedder, filters=filters, **_some(seed_top_k=seed_top_k, damping=damping))
    if mode == "entity":
        from .entity import EntityGraphRetriever

        return EntityGraphRetriever(store, embedder, filters=filters, **_some(max_hops=hops))
    from .local_search import LocalSearchRetriever

    return LocalSearchRetriever(store, embedder, filters=filters, **_some(min_similarity=min_score))


def _some(**options: Any) -> dict[str, Any]:
    return {k: v for k, v in options.items() if v is not None}
