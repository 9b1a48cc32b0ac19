"""Entity-boosted retrieval: vector candidates re-ranked by the entities they mention.

1. the ``k * 2`` chunks nearest the query are the candidates (``scores.vector``: Neo4j's
   normalised cosine, (1 + cos) / 2);
2. the ``query_entities_top_k`` (3) entities nearest the query are the query entities, those
   at least ``query_entity_floor`` close (normalised cosine); with ``named_query_entities``
   (on by default, measured better on the train files) the entities the query *names* join
   them (exact name key, as graph retrieval finds them; at most 25 chunks mentioning each);
3. their neighbours within ``max_hops`` over entity relationships, each with its distance and
   strength (weight of its best relationship at first reach), optionally only some
   relationship types or only relationships with ``sequence <= max_sequence``;
4. each candidate earns ``entity_boost_direct`` (0.3) per query entity it mentions plus
   ``entity_boost_indirect * (1 / distance) * strength`` (0.1 * ...) per related entity it
   mentions (:func:`kgrag_neo4j.retrieval.scoring.entity_boost`); with ``centrality``
   (``"degree"`` or ``"pagerank"``, scaled to [0, 1]) the indirect term is further multiplied
   by the related entity's centrality (PageRank-style entity importance), so a hub
   boosts more than a leaf; direct terms are never scaled;
5. candidates are re-ranked by ``similarity + boost``, where ``similarity`` is the raw cosine
   (``score_scale="cosine"``, the original formula's) or Neo4j's normalised
   ``(1 + cos) / 2`` (``score_scale="normalized"``: the boost then weighs twice as much
   against a difference in closeness);
6. with ``expand`` and fewer than ``k`` candidates, the source chunks of the related entities
   (strongest relationship first) are appended, scored the same way, after the ranked ones.

On ``Neo4jStore`` steps 1-3 and the look-ups of 4 and 6 are ONE database round trip
(``cypher/entities/boost_retrieve.cypher``); centrality adds one more round trip the first time
it is needed (it is cached on the retriever; ``refresh_centrality()`` after rebuilding
entities). Every result explains its boost, entity path included.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from ..entities.centrality import degree_centrality, pagerank_centrality
from ..entities.gazetteer import query_name_keys
from ..errors import ConfigurationError, InputError
from ..protocols import EmbeddingProvider, EntityBoostReader, EntityCentralitySource, RoundTripCounter
from ..score_parts import raw_cosine
from ..steps import Call, Steps, twin_methods
from ..types import ChunkFilter, ComponentScores, RetrievalResult
from ..types.entities import CENTRALITY_KINDS, ENTITY_MAX_HOPS, EntityBoostContext, EntityCandidate
from ..validation import MAX_TOP_K, check_choice, check_int, check_number
from .declaration import declare_mode, mode_option
from .retrievers import embed_query
from .scoring import entity_boost

__all__ = ["ENTITY_MODE", "EntityGraphRetriever", "EntityRetrievalTrace"]

log = logging.getLogger("kgrag_neo4j.retrieval.entity")

#: what a candidate's closeness is before its boost is added: "cosine" as the original formula, or Neo4j's
#: normalised "(1 + cos) / 2"
SCORE_SCALES = ("cosine", "normalized")
#: query entities less close than this (normalised cosine) boost nothing; chosen on the train files
DEFAULT_QUERY_ENTITY_FLOOR = 0.0
MAX_HOPS = ENTITY_MAX_HOPS


@dataclasses.dataclass(frozen=True, slots=True)
class EntityRetrievalTrace:
    """What the last ``retrieve`` saw: for logging, debugging and the boost metrics."""

    query_entities: tuple[dict[str, Any], ...]
    related: tuple[dict[str, Any], ...]
    candidates: int
    expanded: int
    round_trips: int
    #: results returned, and the mean and largest boost among them (the boost metrics: an
    #: average above 0.1 says the graph adds value, a huge maximum hints at a bug)
    returned: int = 0
    avg_boost: float = 0.0
    max_boost: float = 0.0


def _path_text(path: Sequence[Sequence[str]], target: str) -> str:
    steps = "".join(f"{name} -[{rel}]- " for name, rel in path)
    return f"{steps}{target}"


def _round_trips(store: object) -> int:
    """Statements the store sent so far (the trace counts a retrieval's); 0 if it keeps no count."""
    return store.round_trips if isinstance(store, RoundTripCounter) else 0


class EntityGraphRetriever:
    """Vector candidates re-ranked by the entities they mention; see the module
    docstring for the algorithm. Defaults are the original formula's.

    Needs a store with the entity capability (``Neo4jStore``). ``filters`` restrict the chunks
    (candidates and expansion alike); ``min_similarity`` drops weak candidates before the
    expansion rule counts them (0 keeps the original behaviour).
    """

    kind = "entity"

    def __init__(
        self,
        store: EntityBoostReader,
        embedder: EmbeddingProvider,
        *,
        max_hops: int = 1,
        entity_boost_direct: float = 0.3,
        entity_boost_indirect: float = 0.1,
        use_relationship_strength: bool = True,
        query_entities_top_k: int = 3,
        relationship_types: Sequence[str] | None = None,
        max_sequence: int | None = None,
        centrality: str | None = None,
        filters: Sequence[ChunkFilter] = (),
        expand: bool = True,
        min_similarity: float = 0.0,
        score_scale: str = "cosine",
        query_entity_floor: float = DEFAULT_QUERY_ENTITY_FLOOR,
        named_query_entities: bool = True,
    ):
        check_int(max_hops, "max_hops", minimum=0, maximum=MAX_HOPS)
        check_number(entity_boost_direct, "entity_boost_direct", minimum=0)
        check_number(entity_boost_indirect, "entity_boost_indirect", minimum=0)
        check_int(query_entities_top_k, "query_entities_top_k", minimum=1)
        if centrality is not None and centrality not in CENTRALITY_KINDS:
            raise ConfigurationError(f"centrality must be None, 'degree' or 'pagerank', got {centrality!r}")
        if max_sequence is not None:
            check_int(max_sequence, "max_sequence (or None)")
        check_choice(score_scale, "score_scale", SCORE_SCALES)
        check_number(query_entity_floor, "query_entity_floor (a normalised cosine)", minimum=0, maximum=1)
        if isinstance(relationship_types, str):
            relationship_types = [relationship_types]
        if not isinstance(store, EntityBoostReader):
            raise ConfigurationError("EntityGraphRetriever needs a store with the entity capability (Neo4jStore)")
        self.store, self.embedder = store, embedder
        self.max_hops = max_hops
        self.entity_boost_direct = float(entity_boost_direct)
        self.entity_boost_indirect = float(entity_boost_indirect)
        self.use_relationship_strength = bool(use_relationship_strength)
        self.query_entities_top_k = query_entities_top_k
        self.relationship_types = list(relationship_types) if relationship_types else None
        self.max_sequence = max_sequence
        self.centrality = centrality
        self.filters = tuple(filters)
        self.expand = bool(expand)
        self.min_similarity = float(min_similarity)
        self.score_scale = score_scale
        self.query_entity_floor = float(query_entity_floor)
        self.named_query_entities = bool(named_query_entities)
        if centrality is not None and not isinstance(store, EntityCentralitySource):
            raise ConfigurationError("centrality needs a store that reads entity degrees and the entity graph (Neo4jStore)")
        self._centrality_source = store if isinstance(store, EntityCentralitySource) else None
        self._centrality_scores: dict[str, float] | None = None
        self.last_trace: EntityRetrievalTrace | None = None

    def refresh_centrality(self) -> None:
        """Forget cached centrality scores (call after the entity graph changed)."""
        self._centrality_scores = None

    def _centrality(self) -> Steps[dict[str, float] | None]:
        source = self._centrality_source
        if self.centrality is None or source is None:
            return None
        if self._centrality_scores is None:
            if self.centrality == "degree":
                self._centrality_scores = degree_centrality((yield from Call.of(source.entity_degrees)))
            else:
                self._centrality_scores = pagerank_centrality((yield from Call.of(source.read_entity_graph)))
        return self._centrality_scores

    def _retrieve(self, query: str, top_k: int = 5) -> Steps[list[RetrievalResult]]:
        """The ``top_k`` best results for ``query``; ``aretrieve`` reads on the store's async driver."""
        if not isinstance(query, str) or not query.strip():
            raise InputError("query must be non-empty text")
        check_int(top_k, "top_k", minimum=1, maximum=MAX_TOP_K, error=InputError)
        vector = yield from embed_query(self.store, self.embedder, query)
        before = _round_trips(self.store)
        centrality = yield from self._centrality()
        ctx = yield from Call.of(
            self.store.entity_boost_context,
            vector,
            chunk_k=min(top_k * 2, MAX_TOP_K),
            entity_k=self.query_entities_top_k,
            max_hops=self.max_hops,
            relation_types=self.relationship_types,
            max_sequence=self.max_sequence,
            expand_k=top_k if self.expand else 0,
            min_similarity=self.min_similarity,
            filters=self.filters,
            entity_floor=self.query_entity_floor,
            entity_keys=query_name_keys(query) if self.named_query_entities else [],
        )
        results = self.rank(ctx, top_k, centrality=centrality)
        after = _round_trips(self.store)
        boosts = [r.scores.boost or 0.0 for r in results]
        self.last_trace = EntityRetrievalTrace(
            query_entities=tuple(dataclasses.asdict(q) for q in ctx.query_entities),
            related=tuple(dataclasses.asdict(r) for r in ctx.related),
            candidates=len(ctx.candidates),
            expanded=sum(1 for r in results if r.explanation and r.explanation[0].startswith("expansion:")),
            round_trips=after - before,
            returned=len(results),
            avg_boost=sum(boosts) / len(boosts) if boosts else 0.0,
            max_boost=max(boosts, default=0.0),
        )
        log.debug(
            "entity retrieval: %d query entities, %d related, %d candidates, %d results, boost avg %.3f max %.3f",
            len(ctx.query_entities),
            len(ctx.related),
            len(ctx.candidates),
            len(results),
            self.last_trace.avg_boost,
            self.last_trace.max_boost,
        )
        return results

    retrieve, aretrieve = twin_methods(_retrieve, name="retrieve")

    # -- pure part: the arithmetic of steps 4-6 on what the store returned ----------------------
    def rank(
        self, ctx: EntityBoostContext, top_k: int, *, centrality: Mapping[str, float] | None = None
    ) -> list[RetrievalResult]:
        """Boost, re-rank and expand the context ``entity_boost_context`` read."""
        query_ids = [e.id for e in ctx.query_entities]
        names = {e.id: e.name for e in ctx.query_entities}
        related: dict[str, tuple[float, float]] = {}
        paths: dict[str, str] = {}
        steps: dict[str, list[tuple[str, str]]] = {e.id: [(e.name, "")] for e in ctx.query_entities}
        for r in ctx.related:
            names[r.id] = r.name
            steps[r.id] = list(r.path) + [(r.name, "")]
            strength = r.strength if self.use_relationship_strength else 1.0
            paths[r.id] = "path: " + _path_text(r.path, r.name)
            if centrality is not None:
                # the boost formula has one strength factor: it carries the centrality too
                importance = float(centrality.get(r.id, 0.0))
                paths[r.id] = f"strength = {strength:.2f} x centrality {importance:.2f}; " + paths[r.id]
                strength *= importance
            related[r.id] = (r.distance, strength)

        def scored(cand: EntityCandidate, extra: list[str]) -> RetrievalResult:
            similarity = cand.similarity
            boost, lines = entity_boost(
                list(cand.mentions),
                query_ids,
                related,
                direct=self.entity_boost_direct,
                indirect=self.entity_boost_indirect,
                use_strength=True,  # the strength above already is 1.0 when it is off
            )
            # entity_boost explains direct terms first, then indirect ones, each group in id order
            mentioned = set(cand.mentions)
            order = sorted(mentioned & set(query_ids)) + sorted((mentioned & set(related)) - set(query_ids))
            explanation = list(extra)
            for entity_id, line in zip(order, lines):
                line = line.replace(entity_id, f"{names.get(entity_id, entity_id)} ({entity_id})", 1)
                if entity_id in paths:
                    line += f"; {paths[entity_id]}"
                explanation.append(line)
            # the structured path of the largest boost term (the first of equal ones)
            best, best_term = None, -1.0
            for entity_id in order:
                if entity_id in query_ids:
                    term = self.entity_boost_direct
                else:
                    distance, strength = related[entity_id]
                    term = self.entity_boost_indirect * strength / distance
                if term > best_term:
                    best, best_term = entity_id, term
            closeness = 0.0
            if similarity is not None:
                closeness = raw_cosine(similarity) if self.score_scale == "cosine" else similarity
            return dataclasses.replace(
                cand.result,
                score=closeness + boost,
                scores=ComponentScores(vector=similarity, boost=boost),
                explanation=explanation,
                mentioned_entity_ids=sorted(mentioned),
                graph_path=list(steps.get(best, [])) if best is not None else [],
            )

        ranked = [scored(cand, []) for cand in ctx.candidates]
        ranked.sort(key=lambda r: (-r.score, r.id))
        if self.expand and len(ranked) < top_k:
            seen = {r.id for r in ranked}
            for cand in ctx.expansion:
                if len(ranked) >= top_k:
                    break
                if cand.result.id in seen:
                    continue
                seen.add(cand.result.id)
                note = (
                    f"expansion: source chunk of related entity {cand.via_entity} ({cand.via_entity_id}), "
                    f"distance {cand.via_distance}, strength {cand.via_strength:.2f}"
                )
                ranked.append(scored(cand, [note]))
        return ranked[:top_k]


ENTITY_MODE = declare_mode(
    "entity",
    EntityGraphRetriever,
    summary="entity-boosted",
    description="passages about the entities the query names, boosted by the entity graph",
    needs=EntityBoostReader,
    needs_text="the entity capability (Neo4jStore)",
    follows_entities=True,
    options={
        "max_hops": mode_option("hops to expand.", flag="hops"),
        "entity_boost_direct": mode_option("boost per query entity a chunk mentions.", flag="boost-direct"),
        "entity_boost_indirect": mode_option("boost per related entity (times 1/distance x strength).", flag="boost-indirect"),
        "query_entities_top_k": mode_option("entities nearest the query to start from.", flag="query-entities"),
        "score_scale": mode_option("boosts add to the raw cosine or to the normalised (1 + cos) / 2.", choices=SCORE_SCALES),
        "query_entity_floor": "query entities less close than this (normalised cosine) boost nothing.",
        "named_query_entities": "entities the query names join the query entities.",
    },
)
