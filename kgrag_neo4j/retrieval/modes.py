"""Retrieval modes by name: the retriever behind each, and the options each one honours.

``build_retriever("graph", store, embedder, max_hops=1)`` is what ``kgrag search --mode graph
--hops 1`` runs. A mode is declared once, next to its retriever (``GRAPH_MODE`` in
``retrievers.py``: :mod:`.declaration`), and found in the registry (:mod:`.registry`). Options
are the retrievers' own keyword names; one a mode cannot honour is refused with a message
naming the modes that take it, never silently dropped (:func:`check_options`). Options not
given keep the retriever's defaults.

``search("graph", store, embedder, "how ...?", 5, max_hops=1)`` builds that retriever and runs
it: what ``kgrag search`` calls. A retriever that reads a context first (local mode: entities,
relationships, community reports) returns it in the response, which the command prints.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..errors import ConfigurationError, InputError
from ..protocols import EmbeddingProvider, Reranker, Store
from ..types import ChunkFilter, RetrievalResult
from ..validation import check_int
from .registry import get_mode, mode_names, modes

if TYPE_CHECKING:
    from .local_search import LocalContext

__all__ = ["MODES", "ContextSearcher", "SearchResponse", "build_retriever", "check_options", "search"]

#: the names of every retrieval mode when it is read (``registry.mode_names()`` reads them anew)
MODES: tuple[str, ...]


def __getattr__(name: str) -> Any:
    # read on use: the registry imports the retriever modules and looks up plugins
    if name == "MODES":
        return mode_names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def check_options(mode: str, given: Sequence[str]) -> None:
    """Refuse options ``mode`` cannot honour: ``ConfigurationError`` naming them and the modes
    that take each."""
    declared = get_mode(mode)
    bad = [name for name in given if name not in declared.option_names]
    if bad:
        parts = []
        for name in bad:
            takers = [m.name for m in modes() if name in m.option_names]
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
    if reranker is not None:
        options["reranker"] = reranker
    return get_mode(mode).build(store, embedder, filters=tuple(filters), **options)


@runtime_checkable
class ContextSearcher(Protocol):
    """A retriever whose results are drawn from a context it reads first (local search): one
    read gives both, and :func:`search` returns the context with them."""

    def context(self, query: str) -> Any: ...

    def retrieve_from(self, context: Any, top_k: int) -> list[RetrievalResult]: ...


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
    if isinstance(retriever, ContextSearcher):
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
