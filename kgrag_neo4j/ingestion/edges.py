"""Chunk-to-chunk edges of one document: how the chunk graph is extracted.

Three sources, each producing :class:`~kgrag_neo4j.types.ChunkEdge` values:

- sequence edges: consecutive chunks of one parent group, weight 1.0, no model needed;
- LLM edges: batches of chunks sent to a :class:`~kgrag_neo4j.protocols.ChatProvider`,
  answers parsed and validated edge by edge;
- similarity edges: ``similar_to`` to the nearest chunks by cosine (for one document's
  embeddings; whole-corpus similarity runs in the database elsewhere).

Then :func:`dedupe_edges` and :func:`prune_edges`. Everything here is pure except the chat
calls made by :func:`extract_llm_edges`; nothing touches the store.

Extraction degrades gracefully: a failing batch (provider error or an answer that is
not JSON) is logged at WARNING and skipped; an invalid edge inside a valid answer is dropped
and the others kept. Extraction never makes ingestion fail.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from ..blas import one_blas_thread
from ..errors import DimensionMismatchError, InputError
from ..options import IngestGraphOptions, check_batching
from ..protocols import ChatProvider
from ..types import Chunk, ChunkEdge, RelationType
from ..validation import check_int, check_number

if TYPE_CHECKING:
    from ..replies import EdgeItem

__all__ = [
    "EDGE_RESPONSE_SCHEMA",
    "RELATION_MEANINGS",
    "build_document_edges",
    "build_edge_prompt",
    "build_sequence_edges",
    "build_text_edges",
    "cross_document_batches",
    "dedupe_edges",
    "edges_to_prune",
    "extract_batch_edges",
    "extract_llm_edges",
    "make_batches",
    "parse_edges",
    "prune_edges",
    "similarity_edges",
]

_log = logging.getLogger(__name__)

T = TypeVar("T")

RELATION_MEANINGS: Mapping[RelationType, str] = {
    RelationType.REFERENCES: "the source cites or mentions content from the target",
    RelationType.ELABORATES: "the source gives more detail on the target's topic",
    RelationType.DEPENDS_ON: "the source assumes knowledge explained in the target",
    RelationType.CONTRADICTS: "the source conflicts with the target",
    RelationType.PART_OF: "the source is a component or subset of the target",
    RelationType.SIMILAR_TO: "the two chunks cover overlapping topics",
    # Why "comes right before": build_sequence_edges points from earlier to later chunks
    # (chunk[0] -> chunk[1]); model edges must use the same direction.
    RelationType.SEQUENCE: "the source comes right before the target in logical order",
    RelationType.CAUSED_BY: "the source is a consequence of the target",
}
"""The eight relation kinds and what each means, as told to the model."""

EDGE_RESPONSE_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "edges": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "source": {"type": "string"},
                    "target": {"type": "string"},
                    "relation": {"type": "string", "enum": [r.value for r in RelationType]},
                    "weight": {"type": "number"},
                    "description": {"type": "string"},
                },
                "required": ["source", "target", "relation", "weight", "description"],
            },
        }
    },
    "required": ["edges"],
}
"""JSON schema of the answer, passed to providers that can constrain their output."""


# --- sequence edges ----------------------------------------------------------------------


def build_sequence_edges(chunks: Iterable[Chunk]) -> list[ChunkEdge]:
    """``sequence`` edges between consecutive chunks.

    Chunks are grouped by ``parent_id`` first (None == None: flat chunks, and the top-level
    parents of the parent-child strategy, form one group), then each group is sorted by
    ``chunk_index`` (stable) and each chunk is linked to the next one of its group. Grouping
    before sorting matters: parents and children are numbered separately, so sorting all
    chunks by index would put a parent between two siblings and lose their link. So a parent
    is never linked to its children, children are linked within their parent, and
    consecutive parents are linked to each other. Weight 1.0, origin ``sequence``; edges come
    group by group, in the order each group first appears.
    """
    groups: dict[str | None, list[Chunk]] = {}
    for chunk in chunks:
        groups.setdefault(chunk.parent_id, []).append(chunk)
    edges: list[ChunkEdge] = []
    for members in groups.values():
        ordered = sorted(members, key=lambda c: c.chunk_index)
        edges += [ChunkEdge(a.id, b.id, RelationType.SEQUENCE, 1.0, origin="sequence") for a, b in zip(ordered, ordered[1:])]
    return edges


# --- batching and the prompt -------------------------------------------------------------


def make_batches(items: Sequence[T], *, batch_size: int = 5, overlap: int = 0) -> list[list[T]]:
    """Sliding windows of ``batch_size`` items, consecutive windows sharing ``overlap``.

    Windows start every ``batch_size - overlap`` items. A window of fewer than 2 items is
    dropped (a lone chunk has no one to relate to). Windowing stops at the
    first window that reaches the end: later windows would only repeat a subset of it and
    cost LLM calls for nothing. Raises :class:`ConfigurationError` unless
    ``batch_size >= 2`` and ``0 <= overlap < batch_size``.
    """
    check_batching(batch_size, overlap)
    items = list(items)
    stride = batch_size - overlap
    batches: list[list[T]] = []
    for start in range(0, len(items), stride):
        window = items[start : start + batch_size]
        if len(window) >= 2:
            batches.append(window)
        if start + batch_size >= len(items):
            break
    return batches


def build_edge_prompt(batch: Sequence[Chunk]) -> str:
    """The extraction prompt for one batch: instructions, then one ``[chunk_id]: content``
    line per chunk."""
    relation_lines = "\n".join(f"- {r.value}: {meaning}" for r, meaning in RELATION_MEANINGS.items())
    chunk_lines = "\n".join(f"[{c.id}]: {c.content}" for c in batch)
    return (
        "You build a knowledge graph over text chunks. Find the relationships between the "
        "chunks below; each chunk starts with its id in square brackets.\n\n"
        "For every relationship you find, give one edge with:\n"
        '- "source": the id of the chunk the relationship goes from\n'
        '- "target": the id of the chunk it points to\n'
        '- "relation": one of ' + ", ".join(r.value for r in RelationType) + "\n"
        '- "weight": your confidence, greater than 0.0 and at most 1.0\n'
        '- "description": one short sentence saying why the relationship exists\n\n'
        "Relation meanings:\n" + relation_lines + "\n\n"
        "Use the ids exactly as written, without the brackets, and never link a chunk to "
        "itself. Answer with JSON only, in this shape:\n"
        '{"edges": [{"source": "<chunk id>", "target": "<chunk id>", "relation": "<relation>", '
        '"weight": 0.8, "description": "<why>"}]}\n'
        'If there are no relationships, answer {"edges": []}.\n\n'
        "Chunks:\n" + chunk_lines + "\n"
    )


# --- parsing the answer ------------------------------------------------------------------


def _batch_id(value: str, valid: set[str]) -> str | None:
    value = value.strip()
    if value in valid:
        return value
    # The prompt shows ids as "[id]"; tolerate a model that copies the brackets.
    if value.startswith("[") and value.endswith("]") and value[1:-1].strip() in valid:
        return value[1:-1].strip()
    return None


def _edge_from(item: EdgeItem | None, valid: set[str], origin: str) -> ChunkEdge | None:
    if item is None:
        return None
    source = _batch_id(item.source, valid)
    target = _batch_id(item.target, valid)
    if source is None or target is None or source == target:
        return None
    try:
        relation = RelationType.parse(item.relation)
    except InputError:
        return None
    return ChunkEdge(source, target, relation, item.weight, description=item.description.strip(), origin=origin)


def parse_edges(response_text: str, batch_ids: Iterable[str], *, origin: str = "llm") -> list[ChunkEdge]:
    """Parse a model's answer into validated edges.

    Accepts ``{"edges": [...]}`` or a bare list, optionally inside a ```` ```json ```` fence
    or surrounded by prose. Each edge is kept only if ``source`` and ``target`` are ids of
    this batch (surrounding brackets tolerated), differ, ``relation`` is one of the eight
    kinds (case and surrounding spaces ignored) and ``weight`` is a number in (0, 1]; a
    missing or non-string description becomes "". Invalid edges are dropped one by one.

    Raises :class:`ProviderResponseError` when the answer holds no JSON or JSON of another
    shape; the caller skips the batch.
    """
    from ..replies import EdgesReply, parse_reply  # Why here: pydantic is slow to import; only replies need it

    reply = parse_reply(response_text, EdgesReply, what="graph extraction answer")
    data = reply.edges
    valid = set(batch_ids)
    edges = [edge for raw in data if (edge := _edge_from(raw, valid, origin)) is not None]
    if len(edges) < len(data):
        _log.debug("graph extraction: dropped %d invalid edge(s) of %d", len(data) - len(edges), len(data))
    return edges


# --- dedup and pruning -------------------------------------------------------------------


def dedupe_edges(edges: Iterable[ChunkEdge]) -> list[ChunkEdge]:
    """One edge per (source, target, relation): the highest weight wins (the first on equal
    weights). Keys keep the order of their first appearance."""
    best: dict[tuple[str, str, str], ChunkEdge] = {}
    for edge in edges:
        key = edge.key()
        current = best.get(key)
        if current is None or edge.weight > current.weight:
            best[key] = edge
    return list(best.values())


def prune_edges(edges: Iterable[ChunkEdge], *, min_weight: float = 0.0, max_edges_per_chunk: int = 0) -> list[ChunkEdge]:
    """Drop edges lighter than ``min_weight``, then keep the ``max_edges_per_chunk`` heaviest
    edges of each source chunk (0 = unlimited).

    Among equal weights the smaller (target id, relation) is kept. Survivors keep their input
    order.
    """
    check_number(min_weight, "min edge weight", minimum=0.0, maximum=1.0)
    check_int(max_edges_per_chunk, "max edges per chunk", minimum=0)

    kept = [e for e in edges if e.weight >= min_weight]
    if max_edges_per_chunk == 0:
        return kept
    by_source: dict[str, list[int]] = {}
    for position, edge in enumerate(kept):
        by_source.setdefault(edge.source_id, []).append(position)
    survivors: set[int] = set()
    for positions in by_source.values():
        positions.sort(key=lambda p: (-kept[p].weight, kept[p].target_id, str(kept[p].relation)))
        survivors.update(positions[:max_edges_per_chunk])
    return [edge for position, edge in enumerate(kept) if position in survivors]


def edges_to_prune(edges: Iterable[ChunkEdge], *, min_weight: float = 0.0, max_edges_per_chunk: int = 0) -> list[ChunkEdge]:
    """The edges :func:`prune_edges` would drop from ``edges``, in input order: what a store
    that already holds ``edges`` must delete for the pruning rule to hold over them all
    (every edge source of a run counts, including those written by the database itself)."""
    edges = list(edges)
    kept = {id(e) for e in prune_edges(edges, min_weight=min_weight, max_edges_per_chunk=max_edges_per_chunk)}
    return [e for e in edges if id(e) not in kept]


# --- LLM extraction ----------------------------------------------------------------------


def extract_llm_edges(
    chunks: Sequence[Chunk],
    chat: ChatProvider,
    *,
    batch_size: int = 5,
    overlap: int = 0,
    workers: int = 3,
    cancel: threading.Event | None = None,
    logger: logging.Logger | None = None,
) -> list[ChunkEdge]:
    """Ask ``chat`` for edges between chunks, batch by batch.

    Batches come from :func:`make_batches` and run on a pool of ``workers`` threads. Before
    each batch a worker checks ``cancel``: once it is set no further batch is sent and the
    edges already found are returned. A batch whose call raises or whose answer is not JSON
    is logged at WARNING (on ``logger``, default this module's) and skipped. The result is
    deduplicated (overlapping batches may find an edge twice) and ordered by batch; every
    edge has origin ``llm``.
    """
    _check_workers(workers)
    batches = make_batches(list(chunks), batch_size=batch_size, overlap=overlap)
    return extract_batch_edges(batches, chat, workers=workers, cancel=cancel, logger=logger, origin="llm")


def _check_workers(workers: Any) -> None:
    check_int(workers, "graph extraction workers", minimum=1)


def extract_batch_edges(
    batches: Sequence[Sequence[Chunk]],
    chat: ChatProvider,
    *,
    workers: int = 3,
    cancel: threading.Event | None = None,
    logger: logging.Logger | None = None,
    origin: str = "llm",
) -> list[ChunkEdge]:
    """One chat call per batch, on ``workers`` threads, with the rules of
    :func:`extract_llm_edges` (cancel checked before each batch, a failing batch logged and
    skipped, result deduplicated and ordered by batch); every edge gets ``origin``."""
    log = logger or _log
    _check_workers(workers)
    batches = [list(b) for b in batches if len(b) >= 2]
    if not batches:
        return []

    def run(index: int, batch: Sequence[Chunk]) -> list[ChunkEdge]:
        if cancel is not None and cancel.is_set():
            return []
        messages = [{"role": "user", "content": build_edge_prompt(batch)}]
        try:
            answer = chat.chat(messages, json_schema=EDGE_RESPONSE_SCHEMA)
            return parse_edges(answer, [c.id for c in batch], origin=origin)
        except Exception as exc:  # any provider or parse failure costs this batch only
            log.warning("graph extraction: batch %d of %d skipped: %s", index + 1, len(batches), exc)
            return []

    with ThreadPoolExecutor(max_workers=min(workers, len(batches)), thread_name_prefix="kgrag-edges") as pool:
        futures = [pool.submit(run, i, b) for i, b in enumerate(batches)]
        found = [edge for future in futures for edge in future.result()]
    if cancel is not None and cancel.is_set():
        log.info("graph extraction cancelled; keeping %d edge(s) found so far", len(found))
    return dedupe_edges(found)


# --- cross-document batches --------------------------------------------------------------


def cross_document_batches(pairs: Iterable[tuple[Chunk, Chunk]], *, batch_size: int = 5) -> list[list[Chunk]]:
    """The LLM calls of cross-document extraction: at most ``batch_size`` chunks per call
    ("chunks per LLM call"), and every candidate
    pair ``(source, target)`` inside at least one call, so no candidate is lost.

    Pairs are grouped by source chunk (in order of first appearance, repeated pairs once);
    a source's targets are cut into runs of ``batch_size - 1``, each run making one unit
    ``[source, *targets]``. Consecutive units share a call while their distinct chunks fit
    in ``batch_size``, so sources with few candidates do not cost a call each.
    Raises :class:`ConfigurationError` unless ``batch_size >= 2``.
    """
    check_int(batch_size, "cross-document batch size", minimum=2)
    sources: dict[str, Chunk] = {}
    targets: dict[str, dict[str, Chunk]] = {}
    for source, target in pairs:
        if source.id == target.id:
            continue
        sources.setdefault(source.id, source)
        targets.setdefault(source.id, {}).setdefault(target.id, target)
    units: list[list[Chunk]] = []
    step = batch_size - 1
    for source_id, source in sources.items():
        found = list(targets[source_id].values())
        units += [[source, *found[i : i + step]] for i in range(0, len(found), step)]
    batches: list[list[Chunk]] = []
    current: dict[str, Chunk] = {}
    for unit in units:
        merged = dict(current)
        for chunk in unit:
            merged.setdefault(chunk.id, chunk)
        if current and len(merged) > batch_size:
            batches.append(list(current.values()))
            merged = {c.id: c for c in unit}
        current = merged
    if current:
        batches.append(list(current.values()))
    return batches


# --- similarity edges --------------------------------------------------------------------


def similarity_edges(
    ids: Sequence[str],
    embeddings: Sequence[Sequence[float]],
    *,
    k: int = 5,
    threshold: float = 0.75,
    origin: str = "similarity",
) -> list[ChunkEdge]:
    """``similar_to`` edges from each chunk to its ``k`` most similar other chunks whose
    cosine similarity is ``>= threshold``.

    Edges are directed (source = the chunk whose neighbours were searched), so a mutual pair
    gets one edge each way and outgoing-only traversal works from either end. Weight is the
    cosine, clamped to at most 1.0; non-positive similarities never make an edge. Equal
    similarities prefer the chunk listed first. A zero vector has no similarity to anything.
    """
    check_int(k, "similarity top k", minimum=1)
    check_number(threshold, "similarity threshold", minimum=0.0, maximum=1.0)
    ids = list(ids)
    if len(ids) != len(embeddings):
        raise InputError(f"similarity_edges got {len(ids)} ids but {len(embeddings)} embeddings")
    if len(set(ids)) != len(ids):
        raise InputError("similarity_edges got duplicate chunk ids")
    if len(ids) < 2:
        return []
    lengths = {len(v) for v in embeddings}
    if len(lengths) != 1:
        raise DimensionMismatchError(f"embeddings of different lengths: {sorted(lengths)}")

    matrix = np.asarray(embeddings, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1)
    unit = np.divide(matrix, norms[:, None], out=np.zeros_like(matrix), where=norms[:, None] > 0)
    with one_blas_thread():
        sims = unit @ unit.T
    np.fill_diagonal(sims, -np.inf)

    edges: list[ChunkEdge] = []
    for i, source in enumerate(ids):
        row = sims[i]
        candidates = [j for j in np.flatnonzero(row >= threshold) if row[j] > 0.0]
        candidates.sort(key=lambda j: (-row[j], j))
        for j in candidates[:k]:
            cosine = float(row[j])
            edges.append(
                ChunkEdge(
                    source,
                    ids[j],
                    RelationType.SIMILAR_TO,
                    min(1.0, cosine),
                    description=f"cosine similarity {cosine:.3f}",
                    origin=origin,
                )
            )
    return edges


# --- options and the per-document pipeline ------------------------------------------------


def build_text_edges(
    chunks: Sequence[Chunk],
    options: IngestGraphOptions,
    *,
    cancel: threading.Event | None = None,
    logger: logging.Logger | None = None,
) -> list[ChunkEdge]:
    """The edges read from a document's own chunks, as the options ask: sequence + LLM
    (neither deduplicated nor pruned: the caller adds its similarity edges first)."""
    edges: list[ChunkEdge] = []
    if options.sequence_edges:
        edges += build_sequence_edges(chunks)
    if options.graph_extraction is not None:
        edges += extract_llm_edges(
            chunks,
            options.graph_extraction,
            batch_size=options.graph_batch_size,
            overlap=options.graph_batch_overlap,
            workers=options.graph_extraction_workers,
            cancel=cancel,
            logger=logger,
        )
    return edges


def build_document_edges(
    chunks: Sequence[Chunk],
    options: IngestGraphOptions,
    *,
    cancel: threading.Event | None = None,
    logger: logging.Logger | None = None,
) -> list[ChunkEdge]:
    """All edges of one document held in memory, as the options ask: :func:`build_text_edges`
    + similarity (between the document's chunks that carry an embedding), deduplicated, then
    pruned (seed order: sources first, pruning last, so only edges worth keeping reach the
    store). The Ingestor builds the same edges, its similarity ones across the namespace."""
    edges = build_text_edges(chunks, options, cancel=cancel, logger=logger)
    if options.similarity_edges:
        embedded = [(c.id, c.embedding) for c in chunks if c.embedding is not None and len(c.embedding) > 0]
        edges += similarity_edges(
            [chunk_id for chunk_id, _ in embedded],
            [embedding for _, embedding in embedded],
            k=options.similarity_top_k,
            threshold=options.similarity_threshold,
        )
    return prune_edges(
        dedupe_edges(edges),
        min_weight=options.min_edge_weight,
        max_edges_per_chunk=options.max_edges_per_chunk,
    )
