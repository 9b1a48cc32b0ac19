"""Pure scoring for the retrievers: rank fusion, graph hop scores, the per-hop expansion,
entity boosts and parent-child resolution.

Nothing here talks to a database or a provider. Every function takes plain values (ids,
floats, the dataclasses of :mod:`kgrag_neo4j.types`) and returns new ones, so each formula
can be checked by hand: Reciprocal Rank Fusion, parent-child resolution, hop-decayed graph
scores and the per-hop BFS, and entity boosts.

Scores are floats where larger is better. Every ordering returned here is total: equal
scores are broken by the rule documented on the function, never by dict or set order.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigurationError, InputError
from ..options import DEFAULT_ENTITY_SEED_WEIGHT, DEFAULT_HOP_DECAY, RRF_K, GraphOptions, decay_tuple
from ..score_parts import raw_cosine
from ..types import GRAPH_BLENDS, Chunk, ChunkEdge, EdgeContext, RetrievalResult
from ..validation import check_choice, check_int, check_number

__all__ = [
    "EdgeFetcher",
    "GraphHit",
    "RankedChunk",
    "SimilarityFetcher",
    "blend_and_rank",
    "entity_boost",
    "expand_per_hop",
    "hop_score",
    "propagate_hop_score",
    "propagate_seed_score",
    "reciprocal_rank_fusion",
    "resolve_parents",
    "seed_score",
]

_log = logging.getLogger(__name__)

EdgeFetcher = Callable[[list[str]], Sequence[ChunkEdge]]
"""``GraphStore.get_edges`` / ``get_incoming_edges``: chunk ids in, their edges out."""


# --- validation helpers ------------------------------------------------------------------


def _number(name: str, value: Any, *, low: float | None = 0.0, high: float | None = None) -> float:
    return check_number(value, name, minimum=low, maximum=high)


def _hop(hop: Any) -> int:
    return check_int(hop, "hop", minimum=1, error=InputError)  # hop 0 is a seed: it has no edge


# --- Reciprocal Rank Fusion --------------------------------------------------------------


def _ids_in_rank_order(ranked: Iterable[Any], which: str) -> list[str]:
    ids: list[str] = []
    seen: set[str] = set()
    for item in ranked:
        if isinstance(item, str):
            chunk_id = item
        elif isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
            chunk_id = item[0]
        elif isinstance(getattr(item, "id", None), str):
            chunk_id = item.id
        else:
            raise InputError(f"{which} must hold chunk ids, (id, score) pairs or results with an id; got {item!r}")
        # A repeated id keeps its first, best rank; counting it twice would reward duplicates.
        if chunk_id not in seen:
            seen.add(chunk_id)
            ids.append(chunk_id)
    return ids


def reciprocal_rank_fusion(
    vector_ranked: Iterable[Any],
    keyword_ranked: Iterable[Any],
    *,
    keyword_weight: float = 0.3,
    k: float = RRF_K,
    normalize: bool = True,
) -> list[tuple[str, float]]:
    """Merge a vector and a keyword ranking with weighted Reciprocal Rank Fusion.

    Each input is in rank order (best first) and may hold chunk ids, ``(id, score)`` pairs or
    objects with an ``id`` (their scores are ignored: RRF only looks at ranks). An id at
    1-based rank ``r`` of a list adds ``weight / (k + r)``, where the vector list weighs
    ``1 - keyword_weight`` and the keyword list ``keyword_weight``.

    With ``normalize`` (the default) the sum is multiplied by ``k + 1``: the best
    possible score (rank 1 in both lists) becomes 1.0, so fused scores lie in [0, 1] and
    minimum-score thresholds mean the same thing as for cosine scores.

    A list whose weight is 0 is ignored entirely, so ``keyword_weight=0`` returns exactly the
    vector list's order and ``keyword_weight=1`` the keyword list's. Output: ``(id, score)``
    sorted by score descending; equal scores keep the order in which the ids first appear
    (the vector list is read before the keyword list).
    """
    kw = _number("keyword_weight", keyword_weight, low=0.0, high=1.0)
    k = _number("k", k, low=0.0)
    vector_ids = _ids_in_rank_order(vector_ranked, "vector_ranked")
    keyword_ids = _ids_in_rank_order(keyword_ranked, "keyword_ranked")

    fused: dict[str, float] = {}
    for weight, ids in ((1.0 - kw, vector_ids), (kw, keyword_ids)):
        if weight == 0.0:
            continue
        for rank, chunk_id in enumerate(ids, start=1):
            fused[chunk_id] = fused.get(chunk_id, 0.0) + weight / (k + rank)

    scale = (k + 1.0) if normalize else 1.0
    # sorted() is stable and the dict keeps first-appearance order: that is the tie-break.
    ordered = sorted(fused.items(), key=lambda item: -item[1])
    return [(chunk_id, score * scale) for chunk_id, score in ordered]


# --- graph scores (hop-decayed traversal) ------------------------------------------------


def seed_score(vector_score: float, *, vector_weight: float = 0.7, graph_weight: float = 0.3) -> float:
    """Blended score of a seed chunk: ``vector_weight * vector_score + graph_weight * 1.0``.

    A seed counts as fully graph-relevant (1.0): it is where the traversal starts. Example:
    cosine 0.9 -> ``0.7 * 0.9 + 0.3 = 0.93``.
    """
    vw = _number("vector_weight", vector_weight)
    gw = _number("graph_weight", graph_weight)
    return vw * float(vector_score) + gw * 1.0


def hop_score(
    edge_weight: float,
    hop: int,
    *,
    graph_weight: float = 0.3,
    hop_decay: Sequence[float] = DEFAULT_HOP_DECAY,
) -> float:
    """Score of a chunk first reached at ``hop`` (1-based) through an edge of ``edge_weight``:
    ``graph_weight * edge_weight * hop_decay[hop]``.

    ``hop_decay[0]`` belongs to the seeds and is never used here. A hop beyond the end of
    ``hop_decay`` uses its last value, so a decay list shorter than ``max_hops`` keeps the
    last factor instead of failing. Example: hop 2, edge 0.8 ->
    ``0.3 * 0.8 * 0.5 = 0.12``.
    """
    _hop(hop)
    decay = decay_tuple(hop_decay)
    gw = _number("graph_weight", graph_weight)
    return gw * float(edge_weight) * decay[min(hop, len(decay) - 1)]


def propagate_seed_score(
    similarity: float,
    entity_score: float = 0.0,
    *,
    vector_weight: float = 0.7,
    entity_seed_weight: float = DEFAULT_ENTITY_SEED_WEIGHT,
) -> float:
    """A seed under ``blend="propagate"``: ``vector_weight * cos + entity_seed_weight * entity_score``.

    ``similarity`` is Neo4j's normalised cosine (what the vector index returns), ``cos`` the
    raw cosine; ``entity_score`` is ``sum(1 / df)`` over the query entities the chunk
    mentions. Example: normalised 0.8 (cos 0.6), one query entity in 2 chunks ->
    ``0.7 * 0.6 + 0.7 * 0.5 = 0.77``.
    """
    vw = _number("vector_weight", vector_weight)
    ew = _number("entity_seed_weight", entity_seed_weight)
    return vw * raw_cosine(similarity) + ew * float(entity_score)


def propagate_hop_score(
    similarity: float,
    best: float,
    hop: int,
    *,
    vector_weight: float = 0.7,
    graph_weight: float = 0.3,
    hop_decay: Sequence[float] = DEFAULT_HOP_DECAY,
) -> float:
    """A chunk first reached at ``hop`` under ``blend="propagate"``:
    ``vector_weight * cos + graph_weight * best * hop_decay[hop]``, where ``best`` is the
    largest ``score of the chunk it came from * edge weight`` over the edges reaching it.

    Example: normalised similarity 0.75 (cos 0.5), reached at hop 1 from a seed scoring 0.595
    through an edge of weight 1.0 -> ``0.7 * 0.5 + 0.3 * 0.595 * 0.7 = 0.47495``: above a weak
    seed of cosine 0.65 with no entity (0.455).
    """
    _hop(hop)
    decay = decay_tuple(hop_decay)
    vw = _number("vector_weight", vector_weight)
    gw = _number("graph_weight", graph_weight)
    return vw * raw_cosine(similarity) + gw * float(best) * decay[min(hop, len(decay) - 1)]


@dataclass(frozen=True, slots=True)
class GraphHit:
    """A chunk the traversal reached: its hop score, the hop, and the edge that scored it."""

    chunk_id: str
    score: float
    hop: int
    context: EdgeContext
    similarity: float | None = None  # own normalised cosine (``blend="propagate"``)


def _edge_rank(weight: float, from_chunk_id: str, relation: str, description: str) -> tuple:
    return (-weight, from_chunk_id, relation, description)


#: ``similarity(chunk_ids)``: Neo4j's normalised cosine of each chunk with the query
SimilarityFetcher = Callable[[list[str]], Mapping[str, float]]


def expand_per_hop(
    seeds: Mapping[str, float] | Iterable[str],
    get_edges: EdgeFetcher,
    get_incoming_edges: EdgeFetcher | None = None,
    options: GraphOptions | None = None,
    *,
    similarity: SimilarityFetcher | None = None,
) -> dict[str, GraphHit]:
    """The original per-hop BFS: one ``get_edges`` (and, if bidirectional, one
    ``get_incoming_edges``) call per hop with the whole frontier.

    This is the fallback for a ``GraphStore`` without the native one-statement traversal;
    the Cypher version must return the same hits. ``seeds`` gives the start chunk ids (a
    mapping's keys; under ``blend="propagate"`` its values are the seeds' scores, which flow
    along the edges). Returns the non-seed chunks reached, keyed by id.

    Semantics:

    - A chunk is scored at the first hop that reaches it and never again; seeds are never
      scored. Cycles therefore end the walk instead of looping.
    - An edge is followed when its relation passes ``relation_filter`` and its weight is
      ``>= min_traversal_score``. Outgoing edges lead to their target; with
      ``bidirectional``, incoming edges lead to their source.
    - Of the edges reaching a chunk at its hop, the best one scores it and becomes its
      context: under ``"seed"`` the heaviest edge, under ``"propagate"`` the largest
      ``score of the chunk it leaves * edge weight``. **Tie-break rule**: that value, then the
      smallest ``from_chunk_id``, then the smallest relation name, then the smallest
      description; on a complete tie the outgoing edge (read first) wins.
    - Under ``"propagate"`` a reached chunk scores :func:`propagate_hop_score` with its own
      similarity from ``similarity`` (0.5, i.e. cosine 0, when there is none), and that score
      is what flows on at the next hop. A seed that another seed reaches at hop 1 gets a hit
      too (:func:`blend_and_rank` keeps the better of its two scores); it is not expanded
      again and its seed score is what it passes on.
    - The frontier of the next hop is the chunks newly reached, in id order.
    - If a fetch raises, the traversal stops (WARNING logged) and the hits of the hops
      already completed are returned: seed results stay usable ("GetEdges() fails ->
      traversal stops, seed results returned as-is").
    """
    options = options or GraphOptions()
    if options.bidirectional and get_incoming_edges is None:
        raise ConfigurationError("bidirectional traversal needs a get_incoming_edges callable")
    propagate = options.blend == "propagate"

    score_of: dict[str, float] = (
        {k: float(v) for k, v in seeds.items()} if isinstance(seeds, Mapping) else dict.fromkeys(seeds, 0.0)
    )
    frontier = list(score_of)
    visited = set(frontier)
    seed_ids = frozenset(frontier)
    hits: dict[str, GraphHit] = {}

    for hop in range(1, options.max_hops + 1):
        if not frontier:
            break
        try:
            # (edge, the chunk it leads to, the frontier chunk it leaves from)
            steps = [(e, e.target_id, e.source_id) for e in get_edges(list(frontier))]
            if get_incoming_edges is not None and options.bidirectional:
                steps += [(e, e.source_id, e.target_id) for e in get_incoming_edges(list(frontier))]
        except Exception as exc:  # any store failure degrades to "no further hops"
            _log.warning("graph traversal stopped at hop %d of %d: %s", hop, options.max_hops, exc)
            break

        in_frontier = set(frontier)
        best: dict[str, tuple[tuple, ChunkEdge, str, float]] = {}
        # under "propagate" a seed reached from another seed at hop 1 is scored too (it keeps
        # the better score, see blend_and_rank); it is never expanded again
        rescore = seed_ids if propagate and hop == 1 else frozenset()
        for edge, neighbour, origin in steps:
            if origin not in in_frontier or neighbour == origin or (neighbour in visited and neighbour not in rescore):
                continue
            if not options.follows(edge.relation) or edge.weight < options.min_traversal_score:
                continue
            value = score_of[origin] * float(edge.weight) if propagate else float(edge.weight)
            rank = _edge_rank(value, origin, str(edge.relation), edge.description or "")
            current = best.get(neighbour)
            if current is None or rank < current[0]:
                best[neighbour] = (rank, edge, origin, value)

        decay = options.decay(hop)
        reached = sorted(best)
        frontier = [c for c in reached if c not in visited]
        sims: Mapping[str, float] = {}
        if propagate and reached and similarity is not None:
            try:
                sims = similarity(list(reached))
            except Exception as exc:  # scores without own closeness beat no traversal at all
                _log.warning("similarity of graph-found chunks failed, scoring them by their edges: %s", exc)
        for chunk_id in reached:
            _, edge, origin, value = best[chunk_id]
            context = EdgeContext(
                from_chunk_id=origin,
                relation=str(edge.relation),
                description=edge.description or "",
                hops=hop,
                weight=float(edge.weight),
            )
            if propagate:
                sim = sims.get(chunk_id)
                score = propagate_hop_score(
                    0.5 if sim is None else sim,
                    value,
                    hop,
                    vector_weight=options.vector_weight,
                    graph_weight=options.graph_weight,
                    hop_decay=options.hop_decay,
                )
            else:
                sim = None
                score = options.graph_weight * float(edge.weight) * decay
            if chunk_id not in visited:  # a rescored seed keeps flowing its seed score
                score_of[chunk_id] = score
            hits[chunk_id] = GraphHit(chunk_id=chunk_id, score=score, hop=hop, context=context, similarity=sim)
        visited.update(frontier)

    return hits


@dataclass(frozen=True, slots=True)
class RankedChunk:
    """One line of the blended ranking.

    ``seed_score`` is the score the seed search gave (vector cosine, or the fused RRF score
    under hybrid seeding) and is None for graph-only chunks; ``graph`` is how a graph-only
    chunk was reached and is None for seeds (seeds carry no graph context).
    """

    chunk_id: str
    score: float
    seed_score: float | None = None
    graph: GraphHit | None = None

    @property
    def is_seed(self) -> bool:
        return self.seed_score is not None


def blend_and_rank(
    seed_results: Mapping[str, float] | Iterable[tuple[str, float]],
    graph_hits: Mapping[str, GraphHit] | Iterable[GraphHit],
    top_k: int,
    *,
    vector_weight: float = 0.7,
    graph_weight: float = 0.3,
    blend: str = "seed",
) -> list[RankedChunk]:
    """The final graph-retrieval ordering (score blending).

    Under ``"seed"`` seeds score :func:`seed_score` of their search score; under
    ``"propagate"`` the seed results already carry their final scores
    (:func:`propagate_seed_score`). Graph hits keep their hop score. A chunk that is both a
    seed and graph-reached keeps the seed score under ``"seed"`` and the better of the two
    under ``"propagate"``. Sorted by score descending, equal scores by
    chunk id, then trimmed to ``top_k``. Repeated seed ids keep their highest score.
    """
    top_k = _top_k(top_k)
    check_choice(blend, "blend", GRAPH_BLENDS)
    seeds: dict[str, float] = {}
    pairs = seed_results.items() if isinstance(seed_results, Mapping) else seed_results
    for chunk_id, score in pairs:
        score = float(score)
        if chunk_id not in seeds or score > seeds[chunk_id]:
            seeds[chunk_id] = score

    ranked = [
        RankedChunk(
            chunk_id,
            seed_score(s, vector_weight=vector_weight, graph_weight=graph_weight) if blend == "seed" else s,
            seed_score=s,
        )
        for chunk_id, s in seeds.items()
    ]
    hits = graph_hits.values() if isinstance(graph_hits, Mapping) else graph_hits
    position = {r.chunk_id: i for i, r in enumerate(ranked)}
    for hit in hits:
        if hit.chunk_id not in seeds:
            ranked.append(RankedChunk(hit.chunk_id, hit.score, graph=hit))
        elif blend == "propagate" and hit.score > ranked[position[hit.chunk_id]].score:
            i = position[hit.chunk_id]
            ranked[i] = RankedChunk(hit.chunk_id, hit.score, seed_score=ranked[i].seed_score, graph=hit)
    ranked.sort(key=lambda r: (-r.score, r.chunk_id))
    return ranked[:top_k]


def _top_k(top_k: Any) -> int:
    return check_int(top_k, "top_k", minimum=1, error=InputError)


# --- entity boost (entity-boosted retrieval, step 4) -------------------------------------


def entity_boost(
    mentioned_ids: Iterable[str],
    query_entity_ids: Iterable[str],
    related: Mapping[str, tuple[float, float]],
    *,
    direct: float = 0.3,
    indirect: float = 0.1,
    use_strength: bool = True,
) -> tuple[float, list[str]]:
    """The boost a chunk earns for the entities it mentions, and why.

    ``direct`` per distinct query entity mentioned, plus, for each mentioned related entity
    that is not itself a query entity, ``indirect * (1 / distance) * strength``
    (``strength`` taken as 1 when ``use_strength`` is False). ``related`` maps an entity id
    to ``(distance, strength)`` with distance >= 1 hops from the query entities.

    Seed examples: two query entities mentioned -> 0.6; a related entity at distance 2 with
    strength 0.9 -> ``0.1 * 0.5 * 0.9 = 0.045``. The explanation lists one line per term,
    direct terms first, each group in entity id order (the order they are summed in).
    """
    d = _number("direct", direct)
    i = _number("indirect", indirect)
    mentioned = set(mentioned_ids)
    query = set(query_entity_ids)

    boost = 0.0
    explanation: list[str] = []
    for entity_id in sorted(mentioned & query):
        boost += d
        explanation.append(f"mentions query entity {entity_id}: +{d:.3f}")
    for entity_id in sorted((mentioned & set(related)) - query):
        distance, strength = related[entity_id]
        check_number(distance, f"related entity {entity_id!r}: distance", minimum=1, error=InputError)
        check_number(strength, f"related entity {entity_id!r}: strength", minimum=0, error=InputError)
        weight = float(strength) if use_strength else 1.0
        term = i * (1.0 / distance) * weight
        boost += term
        explanation.append(
            f"mentions related entity {entity_id} (distance {distance:g}, strength {float(strength):.2f}): +{term:.3f}"
        )
    return boost, explanation


# --- parent-child resolution -------------------------------------------------------------


def resolve_parents(results: Iterable[RetrievalResult], parent_lookup: Mapping[str, Chunk]) -> list[RetrievalResult]:
    """Replace matched child chunks by their parent (parent-child resolution).

    A result with a ``parent_id`` found in ``parent_lookup`` becomes the parent: its id,
    content, chunk index and metadata, keeping the child's score, component scores and graph
    context (the explanation notes the child). Of several results that resolve to the same
    id (children of one parent, or a parent also matched itself) only the best-scored one
    survives. Results without a parent pass through; so does a child whose parent is not in
    the lookup (nothing better to show for it). Returns new objects sorted by score
    descending; equal scores keep their input order.
    """
    ordered = sorted(results, key=lambda r: -r.score)
    out: list[RetrievalResult] = []
    seen: set[str] = set()
    for result in ordered:
        resolved = result
        parent = parent_lookup.get(result.parent_id) if result.parent_id else None
        if parent is not None:
            resolved = dataclasses.replace(
                result,
                id=parent.id,
                content=parent.content,
                document_id=parent.document_id or result.document_id,
                chunk_index=parent.chunk_index,
                parent_id=parent.parent_id,
                metadata=dict(parent.metadata),
                scores=copy.copy(result.scores),
                graph_context=list(result.graph_context),
                explanation=[*result.explanation, f"resolved from child chunk {result.id}"],
            )
        if resolved.id in seen:
            continue
        seen.add(resolved.id)
        out.append(resolved)
    return out
