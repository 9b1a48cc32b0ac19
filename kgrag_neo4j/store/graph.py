"""Chunk-graph capability of Neo4jStore: the ``GraphStore`` protocol plus the Neo4j-native
``GraphTraverser`` (the whole graph retrieval in one statement, ``cypher/graph/retrieve``)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError, InputError, NotFoundError
from ..options import RRF_K, GraphOptions
from ..score_parts import explain_graph_score
from ..steps import Steps, run_steps, twin_methods
from ..types import (
    NATIVE_MAX_HOPS,
    Chunk,
    ChunkEdge,
    ChunkFilter,
    ChunkPair,
    EdgeContext,
    Neighbourhood,
    RelationType,
    RetrievalResult,
    filters_active,
    filters_to_param,
    load_metadata,
)
from ..validation import check_number
from ._rows import EDGE_ROWS, _check_top_k, consistent, edge_from_row, edge_rows, entity_key_rows, result_from_row
from .aio import AsyncDrivers, Read
from .runner import CypherRunner

if TYPE_CHECKING:
    from .schema import VectorSlot

__all__ = ["GraphMixin", "NATIVE_MAX_HOPS"]

log = logging.getLogger("kgrag_neo4j.store.graph")

#: statements that return nodes and relationships, for Neo4j Browser's graph view; the one
#: method reading each (``graph_view``) turns them into maps
GRAPH_VIEW_STATEMENTS = frozenset({"graph/retrieve_graph"})
#: chunks per vector-index read of graph/nearest_chunks
NEAREST_ROWS = 500
#: graph/retrieve_vector_seeded unrolls this many hops; graph/retrieve (NATIVE_MAX_HOPS) does
#: the rest, and whatever uses keyword or entity seeds or filters
VECTOR_SEEDED_MAX_HOPS = 2


class GraphMixin:
    runner: CypherRunner
    aio: AsyncDrivers
    namespace: str
    vector_overfetch: int

    if TYPE_CHECKING:  # defined by SchemaMixin and DocumentsMixin

        def check_embedding(self, embedding: Any, *, what: str = "embedding") -> list[float]: ...
        def _check_embedding(self, embedding: Any, what: str) -> Steps[list[float]]: ...
        def _keyword_query(self, text: str) -> Steps[str]: ...
        def vector_fetch_k(self, top_k: int) -> int: ...
        def _query_vector(self, embedding: Any, what: str = ...) -> Steps[tuple[list[float], dict[str, str]]]: ...
        def _vector_slot(self, dimensions: int | None = None) -> Steps[VectorSlot]: ...
        def vector_params(self) -> dict[str, str]: ...

    def store_edges(self, edges: Sequence[ChunkEdge]) -> int:
        """Idempotent upsert; duplicates keep the highest weight. Returns edges written (edges
        whose endpoints are not chunks of this namespace are skipped)."""
        rows = edge_rows(edges)
        if not rows:
            return 0
        steps = [
            ("graph/store_edges", {"namespace": self.namespace, "rows": rows[i : i + EDGE_ROWS]})
            for i in range(0, len(rows), EDGE_ROWS)
        ]
        return sum(r[0]["stored"] for r in self.runner.write_tx(steps))

    def replace_edges(self, origin: str, edges: Sequence[ChunkEdge]) -> int:
        """Replace the namespace's edges of ``origin`` by ``edges`` (all given the origin
        ``origin``) in one transaction: readers see the old set or the new one. Returns the
        edges written."""
        if not isinstance(origin, str) or not origin:
            raise InputError("origin must be a non-empty string")
        if any(e.origin != origin for e in edges):
            raise InputError(f"every edge given to replace_edges must have origin {origin!r}")
        rows = edge_rows(edges)
        steps: list[tuple[str, dict]] = [("graph/delete_edges_by_origin", {"namespace": self.namespace, "origin": origin})]
        steps += [
            ("graph/store_edges", {"namespace": self.namespace, "rows": rows[i : i + EDGE_ROWS]})
            for i in range(0, len(rows), EDGE_ROWS)
        ]
        return sum(r[0]["stored"] for r in self.runner.write_tx(steps)[1:])

    def _score_chunks(self, embedding: Sequence[float], chunk_ids: Sequence[str]) -> Steps[dict[str, float]]:
        """Chunk id -> normalised cosine with ``embedding``, for the given chunks of the
        namespace that have an embedding."""
        ids = list(dict.fromkeys(chunk_ids))
        if not ids:
            return {}
        vector, slot = yield from self._query_vector(embedding)
        rows = yield from Read(
            self,
            "chunks/score_chunks",
            dict(namespace=self.namespace, embedding=vector, ids=ids, vector_property=slot["vector_property"]),
        )
        return {r["chunk_id"]: float(r["score"]) for r in rows}

    score_chunks, ascore_chunks = twin_methods(_score_chunks)

    def _query_entity_chunks(
        self, keys: Sequence[Mapping[str, Any]], *, max_chunks: int = 25, filters: Sequence[ChunkFilter] = ()
    ) -> Steps[dict[str, tuple[float, list[str]]]]:
        """Chunk id -> (sum of 1 / df, entity names) over the entities named in the query (the
        word runs ``keys``, see ``entities.gazetteer.query_name_keys``; of overlapping names
        found only the longest) that at most ``max_chunks`` chunks mention."""
        rows_in = entity_key_rows(keys)
        if not rows_in:
            return {}
        slot = yield from self._vector_slot()
        rows = yield from Read(
            self,
            "entities/query_entity_chunks",
            dict(
                namespace=self.namespace,
                keys=rows_in,
                max_chunks=int(max_chunks),
                filter=filters_to_param(filters),
                vector_property=slot.vector_property,
            ),
        )
        return {r["chunk_id"]: (float(r["entity_score"]), list(r["names"])) for r in rows}

    query_entity_chunks, aquery_entity_chunks = twin_methods(_query_entity_chunks)

    def _ppr_neighbourhood(
        self,
        embedding: Sequence[float],
        *,
        seed_top_k: int = 10,
        entity_keys: Sequence[Mapping[str, Any]] = (),
        entity_vector_k: int = 3,
        entity_floor: float = 0.8,
        max_entity_chunks: int = 25,
        chunk_edges: bool = True,
        filters: Sequence[ChunkFilter] = (),
    ) -> Steps[Neighbourhood]:
        """The chunk-entity neighbourhood of a query in one round trip
        (``cypher/graph/ppr_neighbourhood``): seeds, query entities, the entities the seeds
        mention, the chunks of those entities, the edges between them."""
        _check_top_k(seed_top_k)
        key_rows = entity_key_rows(entity_keys)
        vector, slot = yield from self._query_vector(embedding)
        rows = yield from Read(
            self,
            "graph/ppr_neighbourhood",
            dict(
                slot,
                namespace=self.namespace,
                embedding=vector,
                seed_top_k=seed_top_k,
                fetch_k=self.vector_fetch_k(seed_top_k),
                filter=filters_to_param(filters),
                entity_keys=key_rows,
                entity_vector_k=int(entity_vector_k),
                entity_floor=float(entity_floor),
                max_entity_chunks=int(max_entity_chunks),
                chunk_edges=bool(chunk_edges),
            ),
        )
        row = rows[0]
        degrees = {c: 0.0 for c in [s["id"] for s in row["seeds"]]}
        degrees.update({c["id"]: float(c["degree"]) for c in row["chunks"]})
        for m in row["mentions"]:
            degrees.setdefault(m["c"], 0.0)
        for e in row["chunk_edges"]:
            degrees.setdefault(e["a"], 0.0)
            degrees.setdefault(e["b"], 0.0)
        return Neighbourhood(
            seeds=tuple((s["id"], float(s["score"])) for s in row["seeds"]),
            query_entities=tuple((q["id"], q["name"], float(q["score"]), q["how"]) for q in row["query_entities"]),
            entities={e["id"]: (e["name"], int(e["df"])) for e in row["entities"]},
            chunk_degrees=degrees,
            mentions=tuple((m["c"], m["e"]) for m in row["mentions"]),
            chunk_edges=tuple((e["a"], e["b"], float(e["w"])) for e in row["chunk_edges"]),
            relations=tuple((r["a"], r["b"], float(r["w"])) for r in row["relations"]),
        )

    ppr_neighbourhood, appr_neighbourhood = twin_methods(_ppr_neighbourhood)

    def delete_edges(self, edges: Sequence[ChunkEdge]) -> int:
        """Delete the stored edges with these (source, target, relation) keys, in one
        transaction; returns how many were deleted (absent ones are ignored)."""
        rows = sorted({(e.source_id, e.target_id, RelationType.parse(e.relation).value) for e in edges})
        if not rows:
            return 0
        params = [{"source_id": s, "target_id": t, "relation": r} for s, t, r in rows]
        steps = [
            ("graph/delete_edges", {"namespace": self.namespace, "rows": params[i : i + EDGE_ROWS]})
            for i in range(0, len(params), EDGE_ROWS)
        ]
        return sum(int(r[0]["deleted"]) for r in self.runner.write_tx(steps))

    def get_edges(self, chunk_ids: Sequence[str]) -> list[ChunkEdge]:
        if not chunk_ids:
            return []
        rows = self.runner.read("graph/get_edges", namespace=self.namespace, ids=list(chunk_ids))
        return [edge_from_row(r) for r in rows]

    def get_incoming_edges(self, chunk_ids: Sequence[str]) -> list[ChunkEdge]:
        if not chunk_ids:
            return []
        rows = self.runner.read("graph/get_incoming_edges", namespace=self.namespace, ids=list(chunk_ids))
        return [edge_from_row(r) for r in rows]

    def prune_orphan_edges(self, *, dry_run: bool = False) -> int:
        """Orphans are chunks no document owns (left by an interrupted foreign writer or a
        manual delete) and the edges on them. Removes both; returns the edge count."""
        return self.prune_orphans(dry_run=dry_run)["edges"]

    def prune_orphans(self, *, dry_run: bool = False) -> dict[str, int]:
        if dry_run:
            row = self.runner.read("graph/count_orphans", namespace=self.namespace)[0]
        else:
            row = self.runner.write("graph/prune_orphans", namespace=self.namespace)[0]
        return {"chunks": int(row["chunks"]), "edges": int(row["edges"] or 0)}

    def nearest_chunks(
        self,
        ids: Sequence[str],
        vectors: Sequence[Sequence[float] | None] | None = None,
        *,
        top_k: int = 5,
        threshold: float = 0.75,
        document_ids: Sequence[str | None] | None = None,
        cross_document: bool = False,
        batch_size: int = NEAREST_ROWS,
    ) -> list[list[tuple[str, float]]]:
        """For each of ``ids``, its ``top_k`` nearest stored chunks of the namespace with
        cosine >= ``threshold`` as ``(chunk id, cosine)``, best first (the chunk itself
        excluded). ``vectors`` gives the query vectors (of chunks not stored yet); without one
        the chunk's stored embedding is used. One vector-index read per ``batch_size`` ids."""
        _check_top_k(top_k)
        check_number(threshold, "similarity threshold (a cosine)", minimum=-1.0, maximum=1.0)
        ids = list(ids)
        vecs = list(vectors) if vectors is not None else [None] * len(ids)
        docs = list(document_ids) if document_ids is not None else [None] * len(ids)
        if not len(vecs) == len(docs) == len(ids):
            raise InputError("nearest_chunks needs one vector and one document id per chunk id")
        found: dict[str, list[tuple[str, float]]] = {}
        for start in range(0, len(ids), batch_size):
            rows = [
                {
                    "id": i,
                    "embedding": self.check_embedding(v, what=f"chunk {i} vector") if v is not None else None,
                    "document_id": d,
                }
                for i, v, d in zip(
                    ids[start : start + batch_size], vecs[start : start + batch_size], docs[start : start + batch_size]
                )
            ]
            for r in self.runner.read(
                "graph/nearest_chunks",
                **_chunk_slot(self.vector_params()),
                namespace=self.namespace,
                rows=rows,
                top_k=top_k,
                fetch_k=max(top_k * self.vector_overfetch * 2, 20),
                threshold=float(threshold),
                cross_document=bool(cross_document),
            ):
                # a chunk deleted while the statement ran reads back without an id
                found[r["id"]] = [(h["id"], float(h["cosine"])) for h in r["hits"] if h.get("id")]
        return [found.get(i, []) for i in ids]

    def build_similarity_edges(
        self,
        chunk_ids: Sequence[str],
        *,
        top_k: int = 5,
        threshold: float = 0.75,
        cross_document: bool = False,
        batch_size: int = NEAREST_ROWS,
    ) -> int:
        """``similar_to`` edges from stored chunks to their ``top_k`` nearest chunks with cosine
        >= ``threshold`` (weight = cosine), found with the vector index in a read, then
        written with ``store_edges``; no vectors leave the database. Returns edges written."""
        ids = list(chunk_ids)
        total = 0
        for start in range(0, len(ids), batch_size):
            part = ids[start : start + batch_size]
            hits = self.nearest_chunks(
                part, top_k=top_k, threshold=threshold, cross_document=cross_document, batch_size=batch_size
            )
            edges = [
                ChunkEdge(
                    s,
                    t,
                    RelationType.SIMILAR_TO,
                    min(1.0, c),
                    description=f"cosine similarity {min(1.0, c):.3f}",
                    origin="similarity",
                )
                for s, found in zip(part, hits)
                for t, c in found
            ]
            total += self.store_edges(edges) if edges else 0
        return total

    def similar_chunk_pairs(
        self,
        *,
        document_ids: Sequence[str] | None = None,
        threshold: float = 0.5,
        max_pairs: int = 3,
    ) -> list[ChunkPair]:
        """Cross-document candidate pairs (seed defaults: threshold 0.5, 3 per chunk), by
        source chunk, then closest first."""
        _check_top_k(max_pairs, "max_pairs")
        rows = self.runner.read(
            "graph/similar_chunk_pairs",
            **_chunk_slot(self.vector_params()),
            namespace=self.namespace,
            document_ids=list(document_ids) if document_ids else None,
            max_pairs=max_pairs,
            fetch_k=max(max_pairs * self.vector_overfetch * 4, 40),
            threshold=float(threshold),
        )
        known: dict[str, Chunk] = {}

        def chunk(chunk_id: str, document_id: str, content: str) -> Chunk:
            return known.setdefault(chunk_id, Chunk(id=chunk_id, document_id=document_id, content=content))

        return [
            ChunkPair(
                chunk(r["source_id"], r["source_document"], r["source_content"]),
                chunk(r["target_id"], r["target_document"], r["target_content"]),
                float(r["cosine"]),
            )
            for r in rows
        ]

    def chunk_detail(self, chunk_id: str) -> dict[str, Any]:
        """One chunk with its document, its edges both ways (``outgoing``, ``incoming``: chunk
        at the other end, relation, weight, origin, description) and the ``entities`` it
        mentions, in one read. ``chunk_id`` may be the first characters of an id, when only
        one chunk of the namespace starts with them. ``NotFoundError`` when none does,
        ``InputError`` when several do."""
        if not isinstance(chunk_id, str) or not chunk_id.strip():
            raise InputError("a chunk id must be non-empty text")
        wanted = chunk_id.strip()
        row = self.runner.read("chunks/show_chunk", namespace=self.namespace, id=wanted)[0]
        if len(row["matches"]) > 1:
            raise InputError(f"more than one chunk id starts with {wanted!r} in namespace {self.namespace!r}: give more of it")
        if row["chunk"] is None:
            raise NotFoundError(f"no chunk {wanted!r} in namespace {self.namespace!r}")
        chunk = dict(row["chunk"])
        chunk["metadata"] = load_metadata(chunk.get("metadata"))
        return {
            "chunk": chunk,
            "document": row["document"],
            "outgoing": row["outgoing"],
            "incoming": row["incoming"],
            "entities": row["entities"],
        }

    def edge_stats(self) -> list[dict[str, Any]]:
        return self.runner.read("graph/stats", namespace=self.namespace)

    def _graph_params(
        self,
        embedding: Sequence[float],
        query: str,
        top_k: int,
        options: GraphOptions,
        filters: Sequence[ChunkFilter],
        entity_keys: Sequence[Mapping[str, Any]],
    ) -> Steps[tuple[bool, dict[str, Any], dict[str, Any]]]:
        """The parameters of a graph retrieval: (whether graph/retrieve_vector_seeded can run it,
        its parameters, graph/retrieve's)."""
        if not isinstance(options, GraphOptions):
            raise InputError(f"options must be GraphOptions, got {type(options).__name__}")
        _check_top_k(top_k)
        if options.max_hops > NATIVE_MAX_HOPS:
            raise ConfigurationError(f"native traversal supports 0..{NATIVE_MAX_HOPS} hops, got {options.max_hops}")
        vector, slot = yield from self._query_vector(embedding)
        keyword_weight = options.seed_keyword_weight
        entity_weight = options.entity_weight
        keyword_query = (yield from self._keyword_query(query)) if keyword_weight > 0 else ""
        key_rows = entity_key_rows(entity_keys) if entity_weight > 0 else []
        filter_param = filters_to_param(filters)
        shared: dict[str, Any] = dict(
            namespace=self.namespace,
            vector_property=slot["vector_property"],
            chunk_index=slot["chunk_index"],
            embedding=vector,
            seed_top_k=options.seed_top_k,
            fetch_k=options.vector_candidates or self.vector_fetch_k(options.seed_top_k),
            max_hops=options.max_hops,
            hop_decay=list(options.hop_decay),
            vector_weight=float(options.vector_weight),
            graph_weight=float(options.graph_weight),
            bidirectional=options.bidirectional,
            relations=[r.value for r in options.relation_filter] or None,
            min_weight=float(options.min_traversal_score),
            top_k=top_k,
            blend=options.blend,
            refine_seeds=options.refine_seeds is not False,
        )
        full = dict(
            shared,
            keyword_query=keyword_query,
            keyword_weight=float(keyword_weight),
            rrf_k=RRF_K,
            filter=filter_param,
            entity_keys=key_rows,
            entity_seed_weight=entity_weight,
            entity_max_chunks=options.entity_max_chunks,
        )
        plain = not keyword_query and not key_rows and not filters_active(filter_param)
        return plain, shared, full

    def graph_view(
        self,
        embedding: Sequence[float],
        query: str,
        top_k: int,
        options: GraphOptions | None = None,
        filters: Sequence[ChunkFilter] = (),
        *,
        entity_keys: Sequence[Mapping[str, Any]] = (),
    ) -> dict[str, Any]:
        """``graph_retrieve``'s retrieval as a graph (``cypher/graph/retrieve_graph``, what Neo4j
        Browser draws): ``nodes`` (the chunks found and the chunks graph-found ones came from:
        id, caption, document, chunk index), ``relationships`` (every RELATES_TO edge between
        them: source, target, relation, weight, origin, description) and ``results`` (id,
        score, hop, came_from, relation per result, best first)."""
        options = GraphOptions() if options is None else options

        def plan() -> Steps[dict[str, Any]]:
            _plain, _shared, full = yield from self._graph_params(embedding, query, top_k, options, filters, entity_keys)
            rows = yield from Read(self, "graph/retrieve_graph", full)
            return rows[0] if rows else {"nodes": [], "relationships": [], "results": []}

        row = run_steps(plan())
        nodes = [
            {
                "id": n["id"],
                "caption": n.get("name") or n["id"],
                "document_id": n.get("document_id"),
                "title": n.get("document_title") or "",
                "chunk_index": n.get("chunk_index"),
            }
            for n in row["nodes"]
        ]
        # ends by element id: a relationship's end nodes come without properties of their own
        chunk_of = {n.element_id: n["id"] for n in row["nodes"]}
        relationships = [
            {
                "source": chunk_of[r.start_node.element_id],
                "target": chunk_of[r.end_node.element_id],
                "relation": r.get("relation"),
                "weight": r.get("weight"),
                "origin": r.get("origin"),
                "description": r.get("description") or "",
            }
            for r in row["relationships"]
        ]
        relationships.sort(key=lambda r: (r["source"], r["target"], r["relation"] or ""))
        return {"nodes": nodes, "relationships": relationships, "results": list(row["results"])}

    def _graph_retrieve(
        self,
        embedding: Sequence[float],
        query: str,
        top_k: int,
        options: GraphOptions | None = None,
        filters: Sequence[ChunkFilter] = (),
        *,
        entity_keys: Sequence[Mapping[str, Any]] = (),
    ) -> Steps[list[RetrievalResult]]:
        """Seeds, expansion, scoring, blend and trim in ONE round trip (see the Cypher file);
        ``graph_retrieve`` runs it on the driver, ``await agraph_retrieve`` on the async one.

        ``options`` (default ``GraphOptions()``) are the retriever's, whole; ``query`` is the
        text of the keyword seeds (``seed_keyword_weight`` > 0). ``entity_keys``: the name keys
        the query could be naming (the retriever computes them,
        ``entities.gazetteer.query_name_keys``); with an entity weight above 0, chunks
        mentioning such an entity (if at most ``entity_max_chunks`` chunks do) are seeds too."""
        options = GraphOptions() if options is None else options
        plain, shared, full = yield from self._graph_params(embedding, query, top_k, options, filters, entity_keys)
        if plain and options.max_hops <= VECTOR_SEEDED_MAX_HOPS:
            # the same rows as graph/retrieve's, for less work (see the Cypher file)
            rows = yield from consistent(self, "graph/retrieve_vector_seeded", listed="rows", **shared)
        else:
            rows = yield from consistent(self, "graph/retrieve", **full)
        keyword_weight = options.seed_keyword_weight
        out: list[RetrievalResult] = []
        for row in rows:
            via = row.get("via")
            hop = int(row["hop"])
            edge = None
            if via:
                edge = EdgeContext(
                    from_chunk_id=via["from_chunk_id"],
                    relation=via["relation"],
                    description=via.get("description") or "",
                    hops=max(hop, 1),
                    weight=float(via["weight"]),
                )
            scores, explanation = explain_graph_score(
                options,
                score=float(row["score"]),
                hop=hop,
                similarity=row.get("vector_score"),
                seed_score=row.get("seed_score"),
                keyword_score=row.get("keyword_score") if keyword_weight > 0 else None,
                entity_score=float(row.get("entity_score") or 0.0),
                entity_names=row.get("entity_names") or (),
                via=edge,
            )
            # a seed raised by another seed's edge says so in its explanation; graph_context
            # is how a chunk the seeds did not find was reached
            context = [edge] if edge is not None and hop > 0 else []
            out.append(result_from_row(row, scores=scores, graph_context=context, explanation=explanation))
        return out

    graph_retrieve, agraph_retrieve = twin_methods(_graph_retrieve)


def _chunk_slot(params: Mapping[str, str]) -> dict[str, str]:
    """A slot's parameters for a statement that reads chunk vectors only."""
    return {"vector_property": params["vector_property"], "chunk_index": params["chunk_index"]}
