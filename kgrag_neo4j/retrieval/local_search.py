"""GraphRAG local search on Neo4j.

query -> embedding -> the ``top_k_entities`` (10) entities whose description embedding is
nearest -> the chunks ("text units") mentioning them, ranked by the cosine of their stored
embedding to the query and taken in that order while they fit ``max_text_unit_tokens`` (4000;
the first unit that would overflow stops the selection, as in GraphRAG), at most
``top_k_text_units`` (10) of them -> the
``top_k_relationships`` (20) heaviest relationships touching those entities -> the reports of
the ``top_k_community_reports`` (3) highest-ranked communities those entities belong to.

On ``Neo4jStore`` all of it is ONE database round trip (``cypher/entities/local_context``);
the similarities are computed in the database from the stored chunk embeddings (nothing is
re-embedded at query time, unlike GraphRAG). ``filters`` restrict the text units (and the
entities to those some passing chunk mentions); ``min_similarity`` drops text units less close
to the query. ``context(query)`` returns the whole
:class:`LocalContext` (``to_text()`` renders it for a prompt); ``retrieve(query, top_k)``
returns the selected text units as results, so the retriever plugs in wherever a
``Retriever`` does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ..errors import ConfigurationError, InputError
from ..protocols import EmbeddingProvider, LocalContextReader
from ..steps import Call, Steps, twin_methods
from ..types import ChunkFilter, ComponentScores, RetrievalResult
from ..types.context import LocalContext, LocalEntity, LocalRelationship, LocalReport, LocalTextUnit
from ..validation import MAX_TOP_K, check_int, check_number
from .declaration import declare_mode, mode_option
from .retrievers import embed_query

__all__ = [
    "LOCAL_MODE",
    "LocalContext",
    "LocalEntity",
    "LocalReport",
    "LocalRelationship",
    "LocalSearchRetriever",
    "LocalTextUnit",
]


class LocalSearchRetriever:
    """GraphRAG local search with GraphRAG's defaults. See the module docstring."""

    kind = "local"

    def __init__(
        self,
        store: LocalContextReader,
        embedder: EmbeddingProvider,
        *,
        top_k_entities: int = 10,
        max_text_unit_tokens: int = 4000,
        top_k_relationships: int = 20,
        top_k_community_reports: int = 3,
        top_k_text_units: int = 10,
        filters: Sequence[ChunkFilter] = (),
        min_similarity: float = 0.0,
    ):
        check_int(top_k_entities, "top_k_entities", minimum=1)
        check_int(top_k_text_units, "top_k_text_units", minimum=1)
        check_number(min_similarity, "min_similarity (a normalised cosine)", minimum=0, maximum=1)
        for label, value in (
            ("max_text_unit_tokens", max_text_unit_tokens),
            ("top_k_relationships", top_k_relationships),
            ("top_k_community_reports", top_k_community_reports),
            ("top_k_text_units", top_k_text_units),
        ):
            check_int(value, label, minimum=0)
        if not isinstance(store, LocalContextReader):
            raise ConfigurationError("LocalSearchRetriever needs a store with the entity capability (Neo4jStore)")
        self.store, self.embedder = store, embedder
        self.top_k_entities = top_k_entities
        self.max_text_unit_tokens = max_text_unit_tokens
        self.top_k_relationships = top_k_relationships
        self.top_k_community_reports = top_k_community_reports
        self.top_k_text_units = top_k_text_units
        self.filters = tuple(filters)
        self.min_similarity = float(min_similarity)

    def _context(self, query: str) -> Steps[LocalContext]:
        """Entities, text units, relationships and community reports for ``query``."""
        if not isinstance(query, str) or not query.strip():
            raise InputError("query must be non-empty text")
        vector = yield from embed_query(self.store, self.embedder, query)
        ctx: LocalContext = yield from Call.of(
            self.store.local_context,
            vector,
            entity_k=self.top_k_entities,
            max_tokens=self.max_text_unit_tokens,
            relationship_k=self.top_k_relationships,
            report_k=self.top_k_community_reports,
            unit_k=self.top_k_text_units,
            min_similarity=self.min_similarity,
            filters=self.filters,
        )
        # top_k_text_units caps the units the token budget let through
        return dataclasses.replace(ctx, text_units=ctx.text_units[: self.top_k_text_units])

    context, acontext = twin_methods(_context, name="context")

    def _retrieve(self, query: str, top_k: int = 5) -> Steps[list[RetrievalResult]]:
        """The first ``top_k`` selected text units, most similar first; ``scores.vector`` is
        the similarity, the explanation names the entities that led to the unit."""
        check_int(top_k, "top_k", minimum=1, maximum=MAX_TOP_K, error=InputError)
        return self.retrieve_from((yield from self._context(query)), top_k)

    retrieve, aretrieve = twin_methods(_retrieve, name="retrieve")

    @staticmethod
    def retrieve_from(ctx: LocalContext, top_k: int) -> list[RetrievalResult]:
        """The first ``top_k`` text units of a context already read, as results."""
        names = {e.id: e.name for e in ctx.entities}
        out = []
        for u in ctx.text_units[:top_k]:
            about = ", ".join(names.get(e, e) for e in u.entity_ids)
            out.append(
                RetrievalResult(
                    id=u.id,
                    content=u.content,
                    score=u.similarity if u.similarity is not None else 0.0,
                    document_id=u.document_id,
                    source=u.source,
                    title=u.title,
                    chunk_index=u.chunk_index,
                    parent_id=u.parent_id,
                    metadata=dict(u.metadata),
                    scores=ComponentScores(vector=u.similarity),
                    explanation=[f"text unit of entities: {about}"] if about else [],
                )
            )
        return out


LOCAL_MODE = declare_mode(
    "local",
    LocalSearchRetriever,
    summary="entities, relationships, community reports, text units",
    description="entity-centred local search: entities, their passages, relationships and community reports",
    needs=LocalContextReader,
    needs_text="the entity capability (Neo4jStore)",
    follows_entities=True,
    options={
        "min_similarity": mode_option("drop text units less close to the query than this.", flag="min-score"),
        "top_k_entities": "entities nearest the query.",
        "top_k_relationships": "heaviest relationships of those entities.",
        "top_k_community_reports": mode_option("community reports.", flag="top-k-reports"),
        "top_k_text_units": "text units at most.",
        "max_text_unit_tokens": mode_option("token budget of the text units.", flag="max-tokens"),
    },
)
