"""Two-phase graph RAG on the triple graph: vector search, then expansion over triples.

Phase 1 is vector search over chunks (``store.search_chunks``). Phase 2 expands from every
phase-1 chunk over the chosen predicates, 1..``max_traversal_depth`` hops, at most
``max_expansion_results`` nodes, in one statement (``store.expand_triples``).

How a chunk reaches the triple graph: through its ``MENTIONS`` edges. The entity extractor
writes them for the entities it finds in the chunk; ``add_triples`` writes them for triples
that carry the chunk's id (``metadata["chunk_id"]``, set by ``extract_and_enqueue(...,
chunk_id=...)``). Entities are matched by normalised name, so a ``PERSON`` the extractor found
and a ``CONCEPT`` a triple named are the same starting point. Scanning every entity name
against the chunk text was rejected: it reads the whole entity set per query.

A store without ``expand_triples`` gives phase-1 results only, and a failing expansion is
logged and skipped: the phase-1 results still come back.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigurationError, InputError
from ..protocols import EmbeddingProvider, Store, TripleExpander
from ..steps import Call, Steps, twin_methods
from ..types import ChunkFilter, RetrievalResult
from ..types.triples import EXPANSION_PREDICATES, ExpandedNode
from ..validation import check_int
from .retrievers import embed_query

__all__ = ["GraphRAGResult", "TripleGraphRetriever", "format_context"]

log = logging.getLogger("kgrag_neo4j.retrieval.triples")

SEMANTIC_HEADER = "## Semantic Context (RAG)"
GRAPH_HEADER = "## Graph-Expanded Context"
GRAPH_INTRO = "The following related items were discovered through knowledge graph traversal:"


def format_context(
    semantic_results: Sequence[RetrievalResult],
    expanded: Sequence[ExpandedNode],
    *,
    collection: str = "knowledge",
) -> str:
    """The context block: a semantic section, then a graph-expanded section.

    Each phase-1 result is ``### [<collection>] <document id>`` and its content (the chunk
    id when it has no document; ``metadata["collection"]`` overrides ``collection``); results
    with empty content are skipped. Each expanded node is
    ``- **<name>** (via <predicate> from <from node>)``. An empty section is left out; with
    nothing at all the result is ``""``.
    """
    sections: list[str] = []
    blocks = []
    for r in semantic_results:
        content = (r.content or "").strip()
        if not content:
            continue
        label = r.metadata.get("collection") if isinstance(r.metadata, dict) else None
        blocks.append(f"### [{label or collection}] {r.document_id or r.id}\n{content}")
    if blocks:
        sections.append(SEMANTIC_HEADER + "\n" + "\n\n".join(blocks))
    if expanded:
        lines = [f"- **{n.name}** (via {n.predicate} from {n.from_name})" for n in expanded]
        sections.append("\n".join([GRAPH_HEADER, GRAPH_INTRO, *lines]))
    return "\n\n".join(sections)


@dataclass
class GraphRAGResult:
    """Both phases' output; ``format()`` is ``format_context`` over them."""

    semantic: list[RetrievalResult] = field(default_factory=list)
    expanded: list[ExpandedNode] = field(default_factory=list)

    def format(self, *, collection: str = "knowledge") -> str:
        return format_context(self.semantic, self.expanded, collection=collection)

    def to_json(self) -> dict[str, Any]:
        return {
            "semantic": [r.to_json() for r in self.semantic],
            "expanded": [n.as_dict() for n in self.expanded],
        }


class TripleGraphRetriever:
    """Vector search, then expansion over the triple graph (module docstring).

    Options (defaults): ``predicates`` followed in phase 2 (related_to,
    resolved_by, caused_by, similar_to), ``max_traversal_depth`` 2 (1..3),
    ``max_expansion_results`` 10, ``top_k`` phase-1 results 5, ``filters`` for phase 1,
    ``collection`` the label of phase-1 results in the formatted context.
    """

    kind = "triple_graph"

    def __init__(
        self,
        store: Store,
        embedder: EmbeddingProvider,
        *,
        predicates: Sequence[str] = EXPANSION_PREDICATES,
        max_traversal_depth: int = 2,
        max_expansion_results: int = 10,
        top_k: int = 5,
        filters: Sequence[ChunkFilter] = (),
        collection: str = "knowledge",
    ):
        if isinstance(predicates, str) or not predicates:
            raise ConfigurationError("predicates must be a non-empty list of predicate names")
        check_int(max_traversal_depth, "max_traversal_depth", minimum=1, maximum=3)
        check_int(max_expansion_results, "max_expansion_results", minimum=0)
        check_int(top_k, "top_k", minimum=1)
        self.store = store
        self.embedder = embedder
        self.predicates = tuple(predicates)
        self.max_traversal_depth = max_traversal_depth
        self.max_expansion_results = max_expansion_results
        self.top_k = top_k
        self.filters = tuple(filters)
        self.collection = collection

    def _search(self, query: str, *, top_k: int | None = None) -> Steps[GraphRAGResult]:
        """Both phases: phase-1 results and the nodes expansion found from them."""
        k = self.top_k if top_k is None else top_k
        if not isinstance(query, str) or not query.strip():
            raise InputError("query must be non-empty text")
        check_int(k, "top_k", minimum=1, error=InputError)
        vector = yield from embed_query(self.store, self.embedder, query)
        semantic = list((yield from Call.of(self.store.search_chunks, vector, k, self.filters)))
        expanded = yield from self._expand(semantic)
        return GraphRAGResult(semantic=semantic, expanded=expanded)

    search, asearch = twin_methods(_search, name="search")

    def _expand(self, semantic: list[RetrievalResult]) -> Steps[list[ExpandedNode]]:
        if not isinstance(self.store, TripleExpander) or not semantic or self.max_expansion_results == 0:
            return []
        expand = self.store.expand_triples
        try:
            return list(
                (
                    yield from Call.of(
                        expand,
                        [],
                        self.predicates,
                        self.max_traversal_depth,
                        self.max_expansion_results,
                        chunk_ids=[r.id for r in semantic],
                    )
                )
            )
        except (InputError, ConfigurationError):
            raise
        except Exception as exc:  # degrade: the semantic context is still an answer
            log.warning("graph expansion failed, returning vector results only: %s", exc)
            return []

    def _retrieve(self, query: str, top_k: int = 5) -> Steps[list[RetrievalResult]]:
        """Phase-1 results only (the ``Retriever`` protocol); ``search`` has both phases."""
        return (yield from self._search(query, top_k=top_k)).semantic

    retrieve, aretrieve = twin_methods(_retrieve, name="retrieve")

    def context(self, query: str, *, top_k: int | None = None) -> str:
        """The formatted context block for ``query`` (``format_context`` of ``search``)."""
        return self.search(query, top_k=top_k).format(collection=self.collection)
