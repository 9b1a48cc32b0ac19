"""The option bags of the pipelines, in one place: keyword-only frozen dataclasses, passed whole.

- :class:`GraphOptions`: how a graph retrieval seeds and expands (the retriever, the per-hop
  loop and ``Neo4jStore.graph_retrieve`` all read the same object);
- :class:`PPROptions`: the personalized PageRank retriever;
- :class:`IngestOptions` with its :class:`IngestGraphOptions` (``IngestOptions.graph``): how
  documents are chunked, embedded and linked.

Each validates in ``__post_init__`` through :mod:`kgrag_neo4j.validation` (one line naming the
option), so an options object that exists is valid: code that receives one never checks it
again, and deriving variants with ``dataclasses.replace`` (which validates anew) is not
needed anywhere in the pipelines. This module is their only home: import them from here.

This module is core: it imports no pipeline package (the chunker and extractor types of
``IngestOptions`` are annotations only).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from .errors import ConfigurationError, InputError
from .provider_protocols import ChatProvider
from .types import GRAPH_BLENDS, RelationType
from .validation import check_bool, check_choice, check_int, check_number

if TYPE_CHECKING:
    from .ingestion.chunkers import Chunker
    from .ingestion.extractors import ExtractorRegistry

__all__ = [
    "DEFAULT_ENTITY_SEED_WEIGHT",
    "DEFAULT_HOP_DECAY",
    "EMBEDDING_FAILURES",
    "GraphOptions",
    "IngestGraphOptions",
    "IngestOptions",
    "PPROptions",
    "RRF_K",
    "STRATEGIES",
    "check_batching",
]

# --- graph retrieval ---------------------------------------------------------------------

RRF_K = 60
"""The RRF rank constant of the original RRF paper."""

DEFAULT_HOP_DECAY: tuple[float, ...] = (1.0, 0.7, 0.5)
"""Score multiplier per hop; index 0 belongs to the seeds and is never used for an edge."""

#: entity seeding under ``blend="propagate"``: chosen on the train files (bench/quality.py --tune)
DEFAULT_ENTITY_SEED_WEIGHT = 0.35


def decay_tuple(hop_decay: Any) -> tuple[float, ...]:
    """``hop_decay`` as a non-empty tuple of non-negative finite numbers."""
    if isinstance(hop_decay, (str, bytes)) or not isinstance(hop_decay, Iterable):
        raise ConfigurationError(f"hop_decay must be a sequence of numbers, got {hop_decay!r}")
    values = tuple(check_number(v, "hop_decay entry", minimum=0.0) for v in hop_decay)
    if not values:
        raise ConfigurationError("hop_decay must not be empty")
    return values


def relation_tuple(value: Any) -> tuple[RelationType, ...]:
    """A relation filter as distinct :class:`RelationType` values, in the order given."""
    if isinstance(value, (str, RelationType)):
        value = (value,)  # one relation given bare; iterating a str would yield letters
    if not isinstance(value, Iterable):
        raise ConfigurationError(f"relation_filter must be a sequence of relation kinds, got {value!r}")
    out: list[RelationType] = []
    for item in value:
        try:
            relation = RelationType.parse(item)
        except InputError as exc:
            raise ConfigurationError(f"relation_filter: {exc}") from None
        if relation not in out:
            out.append(relation)
    return tuple(out)


@dataclass(frozen=True, kw_only=True, slots=True)
class GraphOptions:
    """How a graph retrieval seeds and expands (``blend="seed"`` is the original formula).

    - ``max_hops``: BFS depth; 0 means seeds only.
    - ``graph_weight`` / ``vector_weight``: blend weights (see ``scoring.seed_score``,
      ``scoring.hop_score``); any non-negative values, they need not sum to 1.
    - ``hop_decay``: multiplier per hop, index 0 = seeds (unused), index h = hop h; hops past
      the end reuse the last value.
    - ``bidirectional``: also follow incoming edges (the neighbour is then the edge's source).
    - ``relation_filter``: relation kinds to follow; empty means all. Strings are accepted
      and normalised to :class:`RelationType`.
    - ``min_traversal_score``: edges lighter than this are not followed (compared to the raw
      edge weight, in [0, 1]).
    - ``seed_top_k``: seeds taken from the first search.
    - ``seed_keyword_weight``: keyword weight of the RRF hybrid seeding; 0 disables it.
    - ``blend``: ``"propagate"`` (the default) or ``"seed"``. ``"seed"`` is the original
      formula exactly (``scoring.seed_score``, ``scoring.hop_score``): every seed outranks
      every graph-found chunk whenever ``graph_weight * max edge weight < vector_weight * seed
      score + graph_weight``, i.e. almost always. ``"propagate"`` lets relevance flow: a seed
      scores ``vector_weight * cos + entity_seed_weight * entity score``, a chunk first reached
      at hop h ``vector_weight * cos + graph_weight * max(score of the chunk it came from *
      edge weight * hop_decay[h])``, where ``cos`` is the chunk's own raw cosine with the
      query (see ``scoring.propagate_seed_score``, ``scoring.propagate_hop_score``).
    - ``entity_seed_weight``: chunks that mention an entity the query names (looked up by
      exact name key, see ``entities.gazetteer.query_name_keys``) become seeds too, scored
      with ``entity_seed_weight * sum(1 / df)`` over those entities (``df``: chunks mentioning
      the entity). None (the default) means 0.35 under ``"propagate"`` and 0 (off) under
      ``"seed"``; see :attr:`entity_weight`.
    - ``entity_max_chunks``: an entity mentioned by more chunks than this seeds nothing (it
      is too common to say what the query is about).
    - ``refine_seeds``: the chunks one edge (any relation, either direction) from the vector
      index's seeds are scored by their exact cosine too, and the best ``seed_top_k`` of both
      are the seeds. The index is approximate; the nearest chunks it misses are most often
      near copies of one it found, joined to it by a ``similar_to`` edge. None (the default)
      refines wherever the one-statement retrieval runs and not in the per-hop loop; True
      asks for it and is refused where it cannot be honoured (a store without the one
      statement, ``native=False``, more than 4 hops); False turns it off. At 100k chunks it
      found more of the exact top 10 from the same candidates, and as much from half of them
      (docs/retrieval.md, "Refined seeds").
    - ``vector_candidates``: candidates asked of the vector index for the seeds; None (the
      default) is the store's ``vector_fetch_k(seed_top_k)``, at least 200. Fewer is faster
      and finds less of the exact top ``seed_top_k``; ``refine_seeds`` makes up for it. At
      least ``seed_top_k``; one-statement retrieval only.

    Invalid values raise :class:`ConfigurationError` naming the option.
    """

    max_hops: int = 2
    graph_weight: float = 0.3
    vector_weight: float = 0.7
    hop_decay: tuple[float, ...] = DEFAULT_HOP_DECAY
    bidirectional: bool = False
    relation_filter: tuple[RelationType, ...] = ()
    min_traversal_score: float = 0.0
    seed_top_k: int = 10
    seed_keyword_weight: float = 0.0
    blend: str = "propagate"
    entity_seed_weight: float | None = None
    entity_max_chunks: int = 25
    refine_seeds: bool | None = None
    vector_candidates: int | None = None

    def __post_init__(self) -> None:
        check_int(self.max_hops, "max_hops", minimum=0)
        check_number(self.graph_weight, "graph_weight", minimum=0.0)
        check_number(self.vector_weight, "vector_weight", minimum=0.0)
        object.__setattr__(self, "hop_decay", decay_tuple(self.hop_decay))
        check_bool(self.bidirectional, "bidirectional")
        object.__setattr__(self, "relation_filter", relation_tuple(self.relation_filter))
        check_number(self.min_traversal_score, "min_traversal_score", minimum=0.0, maximum=1.0)
        check_int(self.seed_top_k, "seed_top_k", minimum=1)
        check_number(self.seed_keyword_weight, "seed_keyword_weight", minimum=0.0, maximum=1.0)
        check_choice(self.blend, "blend", GRAPH_BLENDS)
        if self.entity_seed_weight is not None:
            check_number(self.entity_seed_weight, "entity_seed_weight", minimum=0.0)
        check_int(self.entity_max_chunks, "entity_max_chunks", minimum=1)
        if self.refine_seeds is not None:
            check_bool(self.refine_seeds, "refine_seeds")
        if self.vector_candidates is not None:
            check_int(self.vector_candidates, "vector_candidates", minimum=1)
            if self.vector_candidates < self.seed_top_k:
                raise ConfigurationError(
                    f"vector_candidates ({self.vector_candidates}) must be at least seed_top_k ({self.seed_top_k})"
                )

    @property
    def one_statement_only(self) -> list[str]:
        """The options set here that only the one-statement retrieval honours."""
        return [
            name
            for name, on in (
                ("refine_seeds", self.refine_seeds is True),
                ("vector_candidates", self.vector_candidates is not None),
            )
            if on
        ]

    @property
    def entity_weight(self) -> float:
        """``entity_seed_weight`` as used: its default depends on the blend, so that
        ``blend="seed"`` alone reproduces the original retrieval."""
        if self.entity_seed_weight is not None:
            return float(self.entity_seed_weight)
        return DEFAULT_ENTITY_SEED_WEIGHT if self.blend == "propagate" else 0.0

    def decay(self, hop: int) -> float:
        """The hop-decay factor of ``hop`` (past the end of ``hop_decay``: its last value)."""
        return self.hop_decay[min(hop, len(self.hop_decay) - 1)]

    def follows(self, relation: Any) -> bool:
        """Whether the relation filter lets an edge of this kind through."""
        return not self.relation_filter or str(relation) in {r.value for r in self.relation_filter}


# --- personalized PageRank ---------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class PPROptions:
    """How the personalized PageRank retriever seeds and walks; defaults chosen on the train
    files (``python -m bench quality --tune``), see docs/retrieval.md.

    - ``damping``: the chance of following an edge at each step (1 - damping: back to the
      reset vector). HippoRAG's 0.5.
    - ``seed_top_k``: vector seeds.
    - ``temperature``: of the softmax over the seeds' raw cosines (smaller: the top seed takes
      more of the mass).
    - ``entity_share``: the part of the reset mass the query's entities get (when it has any).
    - ``entity_vector_k`` / ``entity_floor``: entities taken by vector search on the entity
      embeddings, and the least normalised cosine for one to count.
    - ``max_entity_chunks``: an entity mentioned by more chunks than this is not expanded (its
      chunks join only if reached otherwise): the neighbourhood size.
    - ``relation_weight`` / ``chunk_edge_weight``: how much entity relations and chunk edges
      weigh against mentions (0 leaves them out).
    - ``max_iterations`` / ``tol``: when the walk stops.
    """

    damping: float = 0.5
    seed_top_k: int = 10
    temperature: float = 0.02
    entity_share: float = 0.2
    entity_vector_k: int = 3
    entity_floor: float = 0.8
    max_entity_chunks: int = 25
    relation_weight: float = 0.3
    chunk_edge_weight: float = 0.3
    max_iterations: int = 100
    tol: float = 1e-8

    def __post_init__(self) -> None:
        check_number(self.damping, "damping", minimum=0.0, maximum=0.99)
        check_number(self.temperature, "temperature", minimum=1e-6)
        check_number(self.entity_share, "entity_share", minimum=0.0, maximum=1.0)
        check_number(self.entity_floor, "entity_floor", minimum=0.0, maximum=1.0)
        check_number(self.relation_weight, "relation_weight", minimum=0.0)
        check_number(self.chunk_edge_weight, "chunk_edge_weight", minimum=0.0)
        check_number(self.tol, "tol", minimum=0.0)
        check_int(self.seed_top_k, "seed_top_k", minimum=1)
        check_int(self.entity_vector_k, "entity_vector_k", minimum=0)
        check_int(self.max_entity_chunks, "max_entity_chunks", minimum=1)
        check_int(self.max_iterations, "max_iterations", minimum=1)


# --- ingestion ---------------------------------------------------------------------------


def check_batching(batch_size: Any, overlap: Any) -> None:
    """The LLM edge batching: ``batch_size >= 2`` chunks, ``0 <= overlap < batch_size``."""
    check_int(batch_size, "graph batch size", minimum=2)
    check_int(overlap, "graph batch overlap", minimum=0)
    if overlap >= batch_size:
        raise ConfigurationError(f"graph batch overlap ({overlap}) must be less than the batch size ({batch_size})")


@dataclass(frozen=True, kw_only=True, slots=True)
class IngestGraphOptions:
    """Edge building at ingestion; one option per edge source, plus pruning.

    - ``graph_extraction``: the chat provider for LLM edges; None disables them.
    - ``graph_batch_size`` (>= 2) / ``graph_batch_overlap`` (< batch size): batching of
      ``edges.make_batches``.
    - ``graph_extraction_workers``: concurrent LLM calls (1 = sequential).
    - ``min_edge_weight`` in [0, 1] / ``max_edges_per_chunk`` (0 = unlimited): pruning.
    - ``sequence_edges``: link consecutive chunks, no model needed.
    - ``similarity_edges``, ``similarity_threshold``, ``similarity_top_k``: ``similar_to``
      edges from each chunk to its nearest embedded chunks (the Ingestor: of the whole
      namespace; ``edges.build_document_edges``: of the document).
    - ``cross_document_edges``: during ingestion, also discover LLM edges from the new
      document's chunks to similar chunks of other documents (done by the Ingestor against
      the store); needs ``graph_extraction``. ``cross_document_threshold`` (0.5, minimum
      cosine of a candidate), ``cross_document_max_pairs`` (3 candidates per chunk) and
      ``cross_document_batch_size`` (5 chunks per LLM call) are the defaults.

    Pruning covers every edge source of a run: the Ingestor applies it again after the
    database has added its similarity edges.

    Invalid values raise :class:`ConfigurationError` naming the option.
    """

    graph_extraction: ChatProvider | None = None
    graph_batch_size: int = 5
    graph_batch_overlap: int = 0
    graph_extraction_workers: int = 3
    min_edge_weight: float = 0.0
    max_edges_per_chunk: int = 0
    sequence_edges: bool = False
    similarity_edges: bool = False
    similarity_threshold: float = 0.75
    similarity_top_k: int = 5
    cross_document_edges: bool = False
    cross_document_threshold: float = 0.5
    cross_document_max_pairs: int = 3
    cross_document_batch_size: int = 5

    def __post_init__(self) -> None:
        if self.graph_extraction is not None and not isinstance(self.graph_extraction, ChatProvider):
            raise ConfigurationError(
                f"graph_extraction must be a ChatProvider (with a chat() method), got {type(self.graph_extraction).__name__}"
            )
        check_batching(self.graph_batch_size, self.graph_batch_overlap)
        for name in ("graph_extraction_workers", "similarity_top_k", "cross_document_max_pairs"):
            check_int(getattr(self, name), name, minimum=1)
        check_int(self.max_edges_per_chunk, "max_edges_per_chunk", minimum=0)
        check_int(self.cross_document_batch_size, "cross_document_batch_size", minimum=2)
        for name in ("min_edge_weight", "similarity_threshold", "cross_document_threshold"):
            check_number(getattr(self, name), name, minimum=0.0, maximum=1.0)
        for name in ("sequence_edges", "similarity_edges", "cross_document_edges"):
            check_bool(getattr(self, name), name)
        if self.cross_document_edges and self.graph_extraction is None:
            raise ConfigurationError(
                "cross_document_edges needs graph_extraction (a ChatProvider): the model finds the relations"
            )

    @property
    def prunes(self) -> bool:
        """Whether a pruning rule is set (min weight above 0, or a per-chunk cap)."""
        return self.min_edge_weight > 0 or self.max_edges_per_chunk > 0

    @property
    def text_edges(self) -> bool:
        """Whether edges are read from a document's own chunks (sequence or LLM): the edges a
        document gets before it is compared with anything else."""
        return self.graph_extraction is not None or self.sequence_edges

    @property
    def enabled(self) -> bool:
        """Whether any per-document edge source is switched on."""
        return self.text_edges or self.similarity_edges


STRATEGIES = ("flat", "parent-child")
EMBEDDING_FAILURES = ("raise", "store_unembedded")


@dataclass(frozen=True, kw_only=True)
class IngestOptions:
    """Ingestion options (defaults in brackets).

    - ``strategy`` ["flat"] or "parent-child";
    - ``chunker`` [RecursiveChunker(512, 50); MarkdownChunker for Markdown] for flat;
    - ``parent_chunker`` / ``child_chunker`` [RecursiveChunker(parent_tokens / child_tokens)];
    - ``parent_tokens`` [1024], ``child_tokens`` [256];
    - ``batch_size`` [64] chunks per ``embed`` call;
    - ``extractors`` [ExtractorRegistry.default()];
    - ``graph`` [no edges]: the edge-building options (sequence, LLM, similarity,
      pruning). ``similarity_edges`` compares the chunks of the run in memory and asks the
      vector index for chunks stored before, so a new chunk is linked to its nearest chunks
      across the whole namespace, not only its document;
    - ``embedding_failure`` ["raise"]: what a failing embedder does to the document: "raise"
      stores nothing; "store_unembedded" stores the chunks without vectors (found by keyword
      search only) and reports it in ``IngestResult.skipped``;
    - ``entities`` [None]: keep the namespace's entity graph current in the same run (the
      documents written are scanned for names and linked, and what a name new to the
      namespace changes elsewhere follows): None does it when the namespace has an entity
      graph, True always (making one), False never (``kgrag entities status`` then shows
      the documents not linked).
    """

    strategy: Literal["flat", "parent-child"] = "flat"
    chunker: Chunker | None = None
    parent_chunker: Chunker | None = None
    child_chunker: Chunker | None = None
    parent_tokens: int = 1024
    child_tokens: int = 256
    batch_size: int = 64
    extractors: ExtractorRegistry | None = None
    graph: IngestGraphOptions = field(default_factory=IngestGraphOptions)
    embedding_failure: Literal["raise", "store_unembedded"] = "raise"
    entities: bool | None = None

    def __post_init__(self) -> None:
        check_choice(self.strategy, "strategy", STRATEGIES)
        if self.entities not in (None, True, False):
            raise ConfigurationError(f"entities must be True, False or None, got {self.entities!r}")
        for name in ("parent_tokens", "child_tokens", "batch_size"):
            check_int(getattr(self, name), name, minimum=1)
        if self.child_tokens >= self.parent_tokens:
            raise ConfigurationError("child_tokens must be smaller than parent_tokens")
        check_choice(self.embedding_failure, "embedding_failure", EMBEDDING_FAILURES)
        if not isinstance(self.graph, IngestGraphOptions):
            raise ConfigurationError(f"graph must be IngestGraphOptions, got {type(self.graph).__name__}")

    def fingerprint(self, content_type: str, embedder_name: str) -> str:
        """What decides the chunks and vectors: a change here makes a re-ingest re-chunk."""
        parts = [
            self.strategy,
            repr(self.chunker or ("markdown" if content_type == "text/markdown" else "recursive")),
            repr(self.parent_chunker),
            repr(self.child_chunker),
            str(self.parent_tokens),
            str(self.child_tokens),
            embedder_name,
        ]
        return hashlib.blake2b("\x1f".join(parts).encode(), digest_size=8).hexdigest()
