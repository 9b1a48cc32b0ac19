"""Personalized PageRank over chunks and entities: a multi-hop retriever in the spirit of
HippoRAG.

The database returns the neighbourhood of the query in one round trip
(``cypher/graph/ppr_neighbourhood``): the vector seeds, the entities the query names or
resembles, the entities the seeds mention, the chunks mentioning those entities, and the
edges between them. The walk runs here, in numpy:

- **Graph.** Chunk-entity mentions weigh ``1 / df`` both ways (``df``: chunks mentioning the
  entity), so a rare entity ties its chunks strongly and a common one barely; entity
  relations weigh ``relation_weight * weight``, chunk edges ``chunk_edge_weight * weight``.
  A node leaves by its *full* weighted degree, counted in the database, so cutting the graph
  to the neighbourhood does not inflate what stays in it: mass bound for nodes outside is
  lost, as it would be spread thin there anyway.
- **Reset.** The seeds, weighted by ``softmax(cos / temperature)`` of their cosine with the
  query, share ``1 - entity_share`` of the mass; the query's entities share ``entity_share``,
  each in proportion to its score over its ``df`` (a specific name says more than a common
  one). With no query entity the seeds take it all.
- **Walk.** ``p = (1 - damping) * reset + damping * W p`` until it moves less than ``tol`` (at
  most ``max_iterations``). Chunks are ranked by their mass.

Results explain themselves: the entities that carried mass into each chunk, with their share.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..entities.gazetteer import query_name_keys
from ..errors import ConfigurationError
from ..options import PPROptions
from ..protocols import EmbeddingProvider, PPRNeighbourhoodReader, Store
from ..score_parts import raw_cosine
from ..steps import Call, Steps
from ..tracing import TracerOption, check_tracer
from ..types import ChunkFilter, ComponentScores, EdgeContext, Neighbourhood, RetrievalResult
from .declaration import declare_mode, mode_option
from .retrievers import _Traced, embed_query

__all__ = ["PPR_MODE", "PPRRetriever", "PageRankResult", "personalized_pagerank", "ppr_rank", "without_vanished"]


@dataclass(frozen=True, slots=True)
class PageRankResult:
    """The stationary mass of every node, and how much each entity sent into each chunk."""

    mass: Mapping[str, float]
    iterations: int
    #: chunk id -> [(entity id, mass it sent into the chunk at the fixed point)], largest first
    carried_by: Mapping[str, list[tuple[str, float]]]


def personalized_pagerank(
    edges: Sequence[tuple[str, str, float]],
    out_degree: Mapping[str, float],
    reset: Mapping[str, float],
    *,
    damping: float = 0.5,
    max_iterations: int = 100,
    tol: float = 1e-8,
) -> tuple[dict[str, float], int, np.ndarray, list[str], np.ndarray, np.ndarray, np.ndarray]:
    """Iterate ``p = (1 - damping) * r + damping * W p`` where ``W[v, u] = w(u, v) / out_degree[u]``.

    ``edges`` are directed (give both directions for an undirected link); ``out_degree[u]``
    is what ``u``'s outgoing weights are divided by (at least the sum of its outgoing weights
    here: a larger value leaks the difference, the mass bound for nodes not in ``edges``).
    ``reset`` is normalised to sum 1. Returns the mass per node and the iterations used, plus
    the arrays the caller may reuse (final vector, node order, sources, targets, transition
    weights).
    """
    nodes: list[str] = list(dict.fromkeys([n for e in edges for n in e[:2]] + list(reset)))
    index = {n: i for i, n in enumerate(nodes)}
    src = np.fromiter((index[e[0]] for e in edges), dtype=np.int64, count=len(edges))
    dst = np.fromiter((index[e[1]] for e in edges), dtype=np.int64, count=len(edges))
    weights = np.fromiter((float(e[2]) for e in edges), dtype=np.float64, count=len(edges))
    degree = np.array([max(float(out_degree.get(n, 0.0)), 0.0) for n in nodes], dtype=np.float64)
    sums = np.bincount(src, weights=weights, minlength=len(nodes)) if len(edges) else np.zeros(len(nodes))
    degree = np.maximum(degree, sums)  # never more out than in: a too-small degree is the edges' sum
    with np.errstate(divide="ignore", invalid="ignore"):
        trans = np.where(degree[src] > 0, weights / degree[src], 0.0) if len(edges) else weights
    r = np.array([max(float(reset.get(n, 0.0)), 0.0) for n in nodes], dtype=np.float64)
    total = r.sum()
    if total <= 0:
        raise ConfigurationError("the reset vector has no mass")
    r /= total
    p = r.copy()
    iterations = 0
    for iterations in range(1, max_iterations + 1):  # noqa: B007 (the count is read after the loop)
        flow = np.bincount(dst, weights=trans * p[src], minlength=len(nodes)) if len(edges) else np.zeros(len(nodes))
        nxt = (1.0 - damping) * r + damping * flow
        delta = float(np.abs(nxt - p).sum())
        p = nxt
        if delta < tol:
            break
    return {n: float(p[i]) for i, n in enumerate(nodes)}, iterations, p, nodes, src, dst, trans


def without_vanished(hood: Neighbourhood) -> Neighbourhood:
    """The neighbourhood without what a concurrent replace or delete took while it was read.

    The read runs at read-committed isolation: a chunk or an entity collected early in the
    statement and deleted before its properties are read comes back with a null id (and null
    name, degree, df). Such a row is dropped here, as if the read had come a moment later."""
    return Neighbourhood(
        seeds=tuple((c, s) for c, s in hood.seeds if c is not None and s is not None),
        query_entities=tuple(q for q in hood.query_entities if q[0] is not None),
        entities={e: (name or "", int(df or 0)) for e, (name, df) in hood.entities.items() if e is not None},
        chunk_degrees={c: float(d or 0.0) for c, d in hood.chunk_degrees.items() if c is not None},
        mentions=tuple((c, e) for c, e in hood.mentions if c is not None and e is not None),
        chunk_edges=tuple((a, b, w) for a, b, w in hood.chunk_edges if a is not None and b is not None and w is not None),
        relations=tuple((a, b, w) for a, b, w in hood.relations if a is not None and b is not None and w is not None),
    )


def ppr_rank(hood: Neighbourhood, options: PPROptions) -> PageRankResult:
    """Personalized PageRank over a neighbourhood, as the module docstring describes."""
    hood = without_vanished(hood)
    edges: list[tuple[str, str, float]] = []
    out_degree: dict[str, float] = {}
    chunk_node = {c: "c:" + c for c in hood.chunk_degrees}
    for chunk, degree in hood.chunk_degrees.items():
        out_degree[chunk_node[chunk]] = float(degree)
    for entity in hood.entities:
        out_degree["e:" + entity] = 1.0  # df mentions of 1 / df each
    for chunk, entity in hood.mentions:
        if entity not in hood.entities:
            continue
        w = 1.0 / max(hood.entities[entity][1], 1)
        c, e = chunk_node.get(chunk, "c:" + chunk), "e:" + entity
        edges += [(c, e, w), (e, c, w)]
    if options.chunk_edge_weight > 0:
        for a, b, w in hood.chunk_edges:
            x = options.chunk_edge_weight * float(w)
            ca, cb = "c:" + a, "c:" + b
            edges += [(ca, cb, x), (cb, ca, x)]
            out_degree[ca] = out_degree.get(ca, 0.0) + x
            out_degree[cb] = out_degree.get(cb, 0.0) + x
    if options.relation_weight > 0:
        for a, b, w in hood.relations:
            if a in hood.entities and b in hood.entities:
                x = options.relation_weight * float(w)
                ea, eb = "e:" + a, "e:" + b
                edges += [(ea, eb, x), (eb, ea, x)]
                out_degree[ea] = out_degree.get(ea, 0.0) + x
                out_degree[eb] = out_degree.get(eb, 0.0) + x

    reset: dict[str, float] = {}
    if hood.seeds:
        cos = np.array([raw_cosine(s) for _, s in hood.seeds])
        w = np.exp((cos - cos.max()) / options.temperature)
        w /= w.sum()
        share = 1.0 - options.entity_share if hood.query_entities else 1.0
        for (chunk, _), x in zip(hood.seeds, w):
            reset["c:" + chunk] = reset.get("c:" + chunk, 0.0) + share * float(x)
    entity_weights = {e: score / max(hood.entities.get(e, ("", 1))[1], 1) for e, _, score, _ in hood.query_entities}
    total = sum(entity_weights.values())
    if total > 0:
        share = options.entity_share if hood.seeds else 1.0
        for e, x in entity_weights.items():
            reset["e:" + e] = reset.get("e:" + e, 0.0) + share * x / total
    if not reset:
        return PageRankResult({}, 0, {})

    mass, iterations, p, nodes, src, dst, trans = personalized_pagerank(
        edges, out_degree, reset, damping=options.damping, max_iterations=options.max_iterations, tol=options.tol
    )
    carried: dict[str, list[tuple[str, float]]] = {}
    for s, d, t in zip(src, dst, trans):
        a, b = nodes[s], nodes[d]
        if a.startswith("e:") and b.startswith("c:"):
            carried.setdefault(b[2:], []).append((a[2:], options.damping * float(t) * float(p[s])))
    for chunk in carried:
        carried[chunk].sort(key=lambda x: (-x[1], x[0]))
    return PageRankResult(
        mass={n[2:]: m for n, m in mass.items() if n.startswith("c:")} | {n: m for n, m in mass.items() if n.startswith("e:")},
        iterations=iterations,
        carried_by=carried,
    )


class PPRRetriever(_Traced):
    """Multi-hop retrieval by personalized PageRank over chunks and the entities they mention.

    One round trip reads the neighbourhood, the walk runs in numpy, a second small read
    fetches the ``top_k`` chunks (``await aretrieve``: both reads on the async driver). Needs
    a store with ``ppr_neighbourhood`` (``Neo4jStore``) and an entity graph (``kgrag entities
    build``); without entities it ranks the seeds by their vector scores alone (PageRank over
    no edges returns the reset vector).
    """

    kind = "ppr"

    def __init__(
        self,
        store: Store,
        embedder: EmbeddingProvider,
        *,
        options: PPROptions | None = None,
        filters: Sequence[ChunkFilter] = (),
        tracer: TracerOption = None,
        **option_overrides: Any,
    ):
        base = options or PPROptions()
        self.options = dataclasses.replace(base, **option_overrides) if option_overrides else base
        if not isinstance(store, PPRNeighbourhoodReader):
            raise ConfigurationError("PPRRetriever needs a store that reads a neighbourhood (Neo4jStore)")
        self.store, self.embedder = store, embedder
        self._neighbourhood: PPRNeighbourhoodReader = store
        self.filters, self.tracer = tuple(filters), check_tracer(tracer)

    def _span_results(self, sp: Any, found: Any) -> list[RetrievalResult]:
        out, ranked, hood = found
        sp.set("result_count", len(out))
        sp.set("iterations", ranked.iterations)
        sp.set("neighbourhood", len(hood.chunk_degrees) + len(hood.entities))
        return out

    def _retrieve(self, query: str, top_k: int) -> Steps[tuple[list[RetrievalResult], PageRankResult, Neighbourhood]]:
        o = self.options
        embedding = yield from embed_query(self.store, self.embedder, query)
        read: Neighbourhood = yield from Call.of(
            self._neighbourhood.ppr_neighbourhood,
            embedding,
            seed_top_k=o.seed_top_k,
            entity_keys=query_name_keys(query),
            entity_vector_k=o.entity_vector_k,
            entity_floor=o.entity_floor,
            max_entity_chunks=o.max_entity_chunks,
            chunk_edges=o.chunk_edge_weight > 0,
            filters=self.filters,
        )
        hood = without_vanished(read)
        ranked = ppr_rank(hood, o)
        chunk_mass = sorted(((c, ranked.mass.get(c, 0.0)) for c in hood.chunk_degrees), key=lambda x: (-x[1], x[0]))
        top = [(c, m) for c, m in chunk_mass if m > 0][:top_k]
        chunks = {c.id: c for c in (yield from Call.of(self.store.get_chunks_by_ids, [c for c, _ in top]))} if top else {}
        seeds = dict(hood.seeds)
        seed_of_entity: dict[str, str] = {}
        for chunk, entity in hood.mentions:  # the best seed mentioning each entity
            if chunk in seeds and (entity not in seed_of_entity or seeds[chunk] > seeds[seed_of_entity[entity]]):
                seed_of_entity[entity] = chunk
        query_entity_ids = {e for e, *_ in hood.query_entities}
        out: list[RetrievalResult] = []
        for chunk_id, mass in top:
            c = chunks.get(chunk_id)
            if c is None:  # deleted between the two reads
                continue
            carriers = ranked.carried_by.get(chunk_id, [])[:3]
            total = sum(m for _, m in ranked.carried_by.get(chunk_id, [])) or 1.0
            context = []
            explanation = []
            for entity, flow in carriers:
                name = hood.entities.get(entity, (entity, 0))[0]
                origin = "the query" if entity in query_entity_ids else (seed_of_entity.get(entity) or "")
                explanation.append(
                    f"entity {name!r} carried {flow / total:.0%} of the mass it got from entities"
                    + (f" (named in {origin})" if origin == "the query" else "")
                )
                if entity in seed_of_entity and seed_of_entity[entity] != chunk_id:
                    context.append(
                        EdgeContext(
                            from_chunk_id=seed_of_entity[entity],
                            relation="mentions",
                            description=f"shares the entity {name!r}",
                            hops=2,
                            weight=round(flow, 6),
                        )
                    )
            out.append(
                RetrievalResult(
                    id=c.id,
                    content=c.content,
                    score=mass,
                    document_id=c.document_id,
                    source=c.source,
                    title=c.document_title,
                    chunk_index=c.chunk_index,
                    parent_id=c.parent_id,
                    metadata=c.metadata,
                    scores=ComponentScores(vector=seeds.get(chunk_id), graph=mass),
                    graph_context=context,
                    explanation=explanation,
                )
            )
        return out, ranked, hood


PPR_MODE = declare_mode(
    "ppr",
    PPRRetriever,
    options_from=PPROptions,
    summary="PageRank over chunks and entities",
    description="personalised PageRank over the entity graph from the query's entities (multi-hop questions)",
    follows_entities=True,
    options={
        "seed_top_k": "seed chunks from the vector search.",
        "damping": "chance of following an edge at each step of the walk.",
        "entity_share": "share of the walk's restart mass on the entities the query names.",
        "max_entity_chunks": mode_option("an entity mentioned by more chunks than this is not expanded.", flag=None),
    },
)
