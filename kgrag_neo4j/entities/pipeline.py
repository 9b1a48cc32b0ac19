"""Build the entity graph of a namespace from the chunks already in the store.

read chunks -> extract (offline by default, or with a chat model) -> resolve -> embed the
entity descriptions -> write entities, mentions, relationships.

Resolution: an entity's id is a hash of namespace, normalised name and normalised type, so
the same entity found in several chunks or documents is one node, and a document ingested
later joins the existing node (writes are MERGEs). The entities already stored are passed to
the extractor as ``known_entities``, so a name keeps its stored type (and id) across builds.
With ``merge_threshold`` entities of the same type whose description embeddings have at least
that cosine are merged too (``resolution.merge_similar_entities``).

Names come from the text (capitalised phrases), from the stored entities, from document titles
("Shawn Levy.txt" names Shawn Levy) and from ``names`` the caller gives; all of them are then
found wherever they are written (a gazetteer pass, see ``OfflineEntityExtractor``). With
``entity_edges`` (the default) the build ends by linking chunks that share a rare entity
(``references`` edges, replaced as a set; see ``chunk_links.entity_chunk_edges``), which is
what graph retrieval follows.

Only leaf chunks are read (one query, ``store.extraction_chunks``): a parent chunk
(parent-child chunking) repeats its children's text, so extracting from it would count every
mention twice. An entity's ``source_chunk_id`` is the first chunk it was found in (chunks in
ingestion order, then document id and chunk index).
Re-running a build over the same chunks changes nothing. A build is switched on at once: the
entities it adds are staged until its mentions and relations are written, then published in
one transaction (``Neo4jStore.publish_entities``), so readers never see half of a build.
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigurationError, InputError
from ..protocols import EmbeddingProvider, EntityStore, MaintainedEntityGraph, embed_batched
from ..types.entities import ExtractionResult
from ..validation import check_int
from .chunk_links import ENTITY_EDGE_ORIGIN, entity_chunk_edges, title_name
from .embedding_text import entity_embedding_text
from .extract_llm import LLMEntityExtractor
from .extract_offline import OfflineEntityExtractor
from .resolution import merge_similar_entities, remap_extraction

__all__ = ["EntityBuildResult", "Progress", "build_entities", "build_entity_edges", "entity_embedding_text"]

#: ``progress(stage, done, total)``; stages: read, extract, embed, write
Progress = Callable[[str, int, int], None]


@dataclass
class EntityBuildResult:
    """Counts of one ``build_entities`` run. ``documents`` counts the documents whose chunks
    were read; ``entities``, ``relations`` and ``mentions`` the rows written (MERGEd, so a re-run
    writes the same rows again without adding nodes). ``dropped`` counts what extraction validation
    rejected, by reason; ``merged`` the entities folded into another by ``merge_threshold``;
    ``seconds`` the time spent per stage."""

    documents: int = 0
    chunks: int = 0
    entities: int = 0
    relations: int = 0
    mentions: int = 0
    merged: int = 0
    entity_edges: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _make_extractor(extractor: Any, namespace: str) -> Any:
    if extractor is None:
        return OfflineEntityExtractor(namespace=namespace)
    if callable(getattr(extractor, "extract", None)):
        found = getattr(extractor, "namespace", namespace)
        if found != namespace:
            raise ConfigurationError(
                f"the extractor makes entity ids for namespace {found!r}, the store's is {namespace!r}; "
                "construct it with namespace=store.namespace"
            )
        return extractor
    if callable(getattr(extractor, "chat", None)):
        return LLMEntityExtractor(extractor, namespace=namespace)
    raise ConfigurationError("extractor must be an entity extractor (with .extract) or a ChatProvider (with .chat)")


def build_entities(
    store: EntityStore,
    embedder: EmbeddingProvider,
    *,
    extractor: Any = None,
    document_ids: Sequence[str] | None = None,
    batch_size: int = 64,
    merge_threshold: float | None = None,
    progress: Progress | None = None,
    names: Sequence[str] = (),
    titles: bool = True,
    entity_edges: bool = True,
    entity_edge_max_chunks: int = 10,
    entity_edges_per_chunk: int = 10,
    reextract: bool = False,
) -> EntityBuildResult:
    """Extract, resolve, embed and store the entities of the namespace's chunks.

    ``extractor``: None for :class:`OfflineEntityExtractor` (no model), a ``ChatProvider`` for
    :class:`LLMEntityExtractor`, or any object with ``extract(chunks, known_entities=...)``
    built for the store's namespace. ``document_ids`` limits the build to those documents
    (default: all). ``batch_size`` texts per embedding call. Progress goes to ``progress``.
    ``names``: more names to find (a gazetteer); ``titles``: document titles are names too.

    Offline (no ``extractor``), with titles and no ``merge_threshold``, the build is the
    maintained graph's (:mod:`kgrag_neo4j.entities.maintain`): streamed in batches, only
    what changed since the last build, and kept current by every ingest and delete after
    it; ``document_ids`` are then linked again together with every document not linked yet.
    ``entity_edges``: afterwards, replace the namespace's ``references`` chunk edges made from
    shared entities (an entity in more than ``entity_edge_max_chunks`` chunks links nothing;
    each chunk keeps ``entity_edges_per_chunk`` edges).

    An extractor with an ``extraction_key`` (a chat model's: the model and the schema) is sent
    only the chunks it has not read with that key yet, so a build after an ingest costs only
    the new text; ``reextract`` sends every chunk again.
    """
    check_int(batch_size, "batch_size", minimum=1)
    if merge_threshold is not None and not (-1.0 <= merge_threshold <= 1.0):
        raise ConfigurationError(f"merge_threshold is a cosine in [-1, 1], got {merge_threshold!r}")
    if document_ids is not None and isinstance(document_ids, str):
        raise InputError("document_ids must be a list of ids, not one string")
    if isinstance(names, str):
        raise InputError("names must be a list of names, not one string")
    report = progress or (lambda stage, done, total: None)
    namespace = store.namespace
    if extractor is None and merge_threshold is None and titles and isinstance(store, MaintainedEntityGraph):
        if document_ids is not None:  # linked with everything else not linked yet: one graph
            store.mark_documents_pending(list(dict.fromkeys(document_ids)))
        return _build_maintained(
            store,
            embedder,
            names=names,
            batch_size=batch_size,
            progress=progress,
            entity_edges=entity_edges,
            max_chunks=entity_edge_max_chunks,
            per_chunk=entity_edges_per_chunk,
        )
    extract = _make_extractor(extractor, namespace)
    store.ensure_embedder(embedder.name, embedder.dimensions)
    result = EntityBuildResult()
    clock = time.perf_counter()

    def lap(stage: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        result.seconds[stage] = round(result.seconds.get(stage, 0.0) + now - clock, 3)
        clock = now

    # read: every leaf chunk in one query, and the entities already stored
    report("read", 0, 1)
    key = None if reextract else getattr(extract, "extraction_key", None)
    chunks = store.extraction_chunks(None if document_ids is None else list(dict.fromkeys(document_ids)), skip_key=key)
    result.documents = len({c.document_id for c in chunks})
    result.chunks = len(chunks)
    known = store.known_entities()
    given = [n for n in names]
    about: dict[str, str] = {}
    if titles:
        for _, title, first_chunk in store.document_titles(None if document_ids is None else list(dict.fromkeys(document_ids))):
            name = title_name(title)
            if name:
                given.append(name)
                if first_chunk:
                    about[first_chunk] = name
    report("read", 1, 1)
    lap("read")

    # extract
    report("extract", 0, len(chunks))
    if isinstance(extract, OfflineEntityExtractor):
        extraction: ExtractionResult = extract.extract(chunks, known_entities=known, names=given, about=about)
    else:  # a model reads the text itself; it takes no gazetteer
        extraction = extract.extract(chunks, known_entities=known)
    report("extract", len(chunks), len(chunks))
    result.dropped = dict(extraction.dropped)
    lap("extract")

    # embed (and optionally merge near-duplicates by embedding)
    entities = list(extraction.entities)
    texts = [entity_embedding_text(e) for e in entities]
    vectors = _embed(embedder, texts, batch_size, report)
    if merge_threshold is not None and entities:
        mapping = merge_similar_entities(entities, vectors, threshold=merge_threshold)
        result.merged = sum(1 for k, v in mapping.items() if k != v)
        if result.merged:
            by_id = {e.id: v for e, v in zip(entities, vectors)}
            with_vectors = dataclasses.replace(
                extraction,
                entities=tuple(dataclasses.replace(e, embedding=tuple(by_id[e.id])) for e in entities),
            )
            extraction = remap_extraction(with_vectors, mapping)
            entities = list(extraction.entities)
            # a merged entity may have taken a longer description from a duplicate: re-embed it
            embedded = dict(zip(texts, vectors))
            texts = [entity_embedding_text(e) for e in entities]
            stale = [t for t in texts if t not in embedded]
            embedded.update(zip(stale, _embed(embedder, stale, batch_size, None)))
            vectors = [embedded[t] for t in texts]
    entities = [dataclasses.replace(e, embedding=tuple(v)) for e, v in zip(entities, vectors)]
    lap("embed")

    # write: entities first (mentions and relations attach to them). New entities are staged
    # and switched on together at the end, so a build that stops between these transactions
    # shows no entity without its mentions and relations (a re-run adopts and finishes them).
    build = uuid.uuid4().hex
    report("write", 0, 4)
    result.entities = store.upsert_entities(entities, build=build)
    report("write", 1, 4)
    result.mentions = store.upsert_mentions(extraction.mentions)
    report("write", 2, 4)
    result.relations = store.upsert_relations(extraction.relations)
    report("write", 3, 4)
    store.publish_entities(build)
    marker = getattr(extract, "extraction_key", None)
    if marker:  # only once everything the chunks gave is written: a stopped build reads them again
        failed: frozenset[str] = getattr(extract, "failed_chunk_ids", frozenset())
        store.mark_extracted([c.id for c in chunks if c.id not in failed], marker)
    report("write", 4, 4)
    lap("write")
    if entity_edges:
        report("link", 0, 1)
        result.entity_edges = build_entity_edges(store, max_chunks=entity_edge_max_chunks, per_chunk=entity_edges_per_chunk)
        report("link", 1, 1)
        lap("link")
    return result


def _build_maintained(
    store: MaintainedEntityGraph,
    embedder: EmbeddingProvider,
    *,
    names: Sequence[str],
    batch_size: int,
    progress: Progress | None,
    entity_edges: bool,
    max_chunks: int,
    per_chunk: int,
) -> EntityBuildResult:
    """The offline build as the maintained graph does it (``entities.maintain``): streamed in
    batches, and on a namespace built before only what changed since. A graph an earlier
    release built whole is cleared and built anew once."""
    from .maintain import MaintainOptions, maintain_entity_graph

    state = store.entity_graph_state()
    legacy = state["entities"] > 0 and store.entity_graph_generation() is None
    options = MaintainOptions(
        entity_edges=entity_edges, edge_max_chunks=max_chunks, edges_per_chunk=per_chunk, batch_size=batch_size
    )
    done = maintain_entity_graph(
        store, embedder, create=True, rebuild=legacy, names=list(names), options=options, progress=progress
    )
    assert done is not None  # create=True always builds
    after = store.entity_graph_state()
    return EntityBuildResult(
        documents=done.documents,
        chunks=done.chunks,
        entities=done.entities,
        relations=int(after.get("relations", 0)),
        mentions=int(after.get("mentions", 0)),
        entity_edges=done.entity_edges,
        seconds=dict(done.seconds),
    )


def build_entity_edges(store: EntityStore, *, max_chunks: int = 10, per_chunk: int = 10) -> int:
    """Replace the namespace's ``references`` chunk edges made from shared entities by the
    ones its mentions give now (``chunk_links.entity_chunk_edges``); returns the edge count."""
    edges = entity_chunk_edges(store.namespace_mentions(), max_chunks=max_chunks, per_chunk=per_chunk)
    return store.replace_edges(ENTITY_EDGE_ORIGIN, edges)


def _embed(embedder: EmbeddingProvider, texts: list[str], batch_size: int, report: Progress | None) -> list[list[float]]:
    out: list[list[float]] = []
    for start in range(0, len(texts), batch_size):
        out.extend(embed_batched(embedder, texts[start : start + batch_size], batch_size=batch_size))
        if report is not None:
            report("embed", min(start + batch_size, len(texts)), len(texts))
    if len(out) != len(texts):
        raise InputError(f"the embedder returned {len(out)} vectors for {len(texts)} texts")
    return out
