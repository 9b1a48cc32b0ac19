"""Chunk-graph capability of Neo4jStore: the seed's ``GraphStore`` plus the Neo4j-native
``GraphTraverser`` (the whole graph retrieval in one statement, ``cypher/graph/retrieve``)."""

from __future__ import annotations

import logging
from typing import Any, Sequence

from ..errors import ConfigurationError, InputError
from ..ids import edge_id
from ..types import (
    ChunkEdge,
    ChunkFilter,
    ComponentScores,
    EdgeContext,
    RelationType,
    RetrievalResult,
    filters_to_param,
)
from .documents import _check_top_k, _load_metadata, escape_lucene_query, read_consistent
from .runner import CypherRunner

__all__ = ["GraphMixin", "NATIVE_MAX_HOPS"]

log = logging.getLogger("kgrag_neo4j.store.graph")

#: hops unrolled in cypher/graph/retrieve.cypher
NATIVE_MAX_HOPS = 4
EDGE_ROWS = 1000
#: chunks per vector-index read of graph/nearest_chunks
NEAREST_ROWS = 500


def _edge_from_row(row: dict[str, Any]) -> ChunkEdge:
    return ChunkEdge(
        id=row.get("id") or "",
        source_id=row["source_id"],
        target_id=row["target_id"],
        relation=RelationType.parse(row["relation"]),
        weight=float(row["weight"]),
        description=row.get("description") or "",
        origin=row.get("origin") or "",
    )


def _edge_row(edge: ChunkEdge) -> dict[str, Any]:
    relation = RelationType.parse(edge.relation).value
    weight = float(edge.weight)
    if not 0.0 < weight <= 1.0:
        raise InputError(f"edge {edge.source_id}->{edge.target_id} weight {weight} is outside (0, 1]")
    if not edge.source_id or not edge.target_id:
        raise InputError("edge source_id and target_id are required")
    if edge.source_id == edge.target_id:
        raise InputError(f"self edge on {edge.source_id} is not allowed")
    return {
        "id": edge.id or edge_id(edge.source_id, edge.target_id, relation),
        "source_id": edge.source_id,
        "target_id": edge.target_id,
        "relation": relation,
        "weight": weight,
        "description": edge.description or "",
        "origin": edge.origin or "llm",
    }


def edge_rows(edges: Sequence[ChunkEdge]) -> list[dict[str, Any]]:
    """Validated ``graph/store_edges`` rows, one per (source, target, relation) with the
    highest weight, in a stable order."""
    best: dict[tuple[str, str, str], dict[str, Any]] = {}
    for e in edges:
        row = _edge_row(e)
        key = (row["source_id"], row["target_id"], row["relation"])
        if key not in best or row["weight"] > best[key]["weight"]:
            best[key] = row
    # a stable order keeps concurrent writers from locking the same chunks in opposite order
    return [best[k] for k in sorted(best)]


class GraphMixin:
    runner: CypherRunner
    namespace: str
    vector_overfetch: int

    def check_embedding(self, embedding: Any, *, what: str = "embedding") -> list[float]: ...

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

    def get_edges(self, chunk_ids: Sequence[str]) -> list[ChunkEdge]:
        if not chunk_ids:
            return []
        rows = self.runner.read("graph/get_edges", namespace=self.namespace, ids=list(chunk_ids))
        return [_edge_from_row(r) for r in rows]

    def get_incoming_edges(self, chunk_ids: Sequence[str]) -> list[ChunkEdge]:
        if not chunk_ids:
            return []
        rows = self.runner.read("graph/get_incoming_edges", namespace=self.namespace, ids=list(chunk_ids))
        return [_edge_from_row(r) for r in rows]

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
        if not -1.0 <= threshold <= 1.0:
            raise ConfigurationError("similarity threshold is a cosine in [-1, 1]")
        ids = list(ids)
        vecs = list(vectors) if vectors is not None else [None] * len(ids)
        docs = list(document_ids) if document_ids is not None else [None] * len(ids)
        if not len(vecs) == len(docs) == len(ids):
            raise InputError("nearest_chunks needs one vector and one document id per chunk id")
        found: dict[str, list[tuple[str, float]]] = {}
        for start in range(0, len(ids), batch_size):
            rows = [
                {"id": i, "embedding": self.check_embedding(v, what=f"chunk {i} vector") if v is not None else None,
                 "document_id": d}
                for i, v, d in zip(ids[start : start + batch_size], vecs[start : start + batch_size], docs[start : start + batch_size])
            ]
            for r in self.runner.read(
                "graph/nearest_chunks",
                namespace=self.namespace,
                rows=rows,
                top_k=top_k,
                fetch_k=max(top_k * self.vector_overfetch * 2, 20),
                threshold=float(threshold),
                cross_document=bool(cross_document),
            ):
                found[r["id"]] = [(h["id"], float(h["cosine"])) for h in r["hits"]]
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
            hits = self.nearest_chunks(part, top_k=top_k, threshold=threshold, cross_document=cross_document, batch_size=batch_size)
            edges = [
                ChunkEdge(s, t, RelationType.SIMILAR_TO, min(1.0, c), description=f"cosine similarity {min(1.0, c):.3f}",
                          origin="similarity")
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
    ) -> list[dict[str, Any]]:
        """Cross-document candidate pairs (seed defaults: threshold 0.5, 3 per chunk)."""
        _check_top_k(max_pairs)
        return self.runner.read(
            "graph/similar_chunk_pairs",
            namespace=self.namespace,
            document_ids=list(document_ids) if document_ids else None,
            max_pairs=max_pairs,
            fetch_k=max(max_pairs * self.vector_overfetch * 4, 40),
            threshold=float(threshold),
        )

    def edge_stats(self) -> list[dict[str, Any]]:
        return self.runner.read("graph/stats", namespace=self.namespace)

    def graph_retrieve(
        self,
        *,
        embedding: Sequence[float],
        top_k: int,
        query_text: str = "",
        seed_top_k: int = 10,
        seed_keyword_weight: float = 0.0,
        max_hops: int = 2,
        hop_decay: Sequence[float] = (1.0, 0.7, 0.5),
        vector_weight: float = 0.7,
        graph_weight: float = 0.3,
        bidirectional: bool = False,
        relation_filter: Sequence[str] | None = None,
        min_traversal_score: float = 0.0,
        filters: Sequence[ChunkFilter] = (),
        rrf_k: int = 60,
    ) -> list[RetrievalResult]:
        """Seeds, expansion, scoring, blend and trim in ONE round trip (see the Cypher file)."""
        _check_top_k(top_k)
        _check_top_k(seed_top_k)
        if not 0 <= max_hops <= NATIVE_MAX_HOPS:
            raise ConfigurationError(f"native traversal supports 0..{NATIVE_MAX_HOPS} hops, got {max_hops}")
        if not hop_decay:
            raise ConfigurationError("hop_decay needs at least one value")
        vector = self.check_embedding(embedding, what="query embedding")
        relations = [RelationType.parse(r).value for r in relation_filter] if relation_filter else None
        keyword_query = escape_lucene_query(query_text) if seed_keyword_weight > 0 else ""
        rows = read_consistent(
            self.runner,
            "graph/retrieve",
            namespace=self.namespace,
            embedding=vector,
            keyword_query=keyword_query,
            keyword_weight=float(seed_keyword_weight),
            rrf_k=int(rrf_k),
            seed_top_k=seed_top_k,
            fetch_k=max(seed_top_k * self.vector_overfetch, seed_top_k + 10),
            filter=filters_to_param(filters),
            max_hops=int(max_hops),
            hop_decay=[float(x) for x in hop_decay],
            vector_weight=float(vector_weight),
            graph_weight=float(graph_weight),
            bidirectional=bool(bidirectional),
            relations=relations,
            min_weight=float(min_traversal_score),
            top_k=top_k,
        )
        out: list[RetrievalResult] = []
        for row in rows:
            c = row["chunk"]
            via = row.get("via")
            hop = int(row["hop"])
            scores = ComponentScores(
                vector=row.get("vector_score"),
                keyword=row.get("keyword_score"),
                fused=row.get("seed_score") if seed_keyword_weight > 0 and hop == 0 else None,
                graph=float(row["score"]) if hop > 0 else float(graph_weight),
            )
            context = []
            if via:
                context.append(
                    EdgeContext(
                        from_chunk_id=via["from_chunk_id"],
                        relation=via["relation"],
                        description=via.get("description") or "",
                        hops=hop,
                        weight=float(via["weight"]),
                    )
                )
            out.append(
                RetrievalResult(
                    id=c["id"],
                    content=c.get("content") or "",
                    score=float(row["score"]),
                    document_id=c.get("document_id") or "",
                    source=c.get("source") or "",
                    title=row.get("title") or "",
                    chunk_index=int(c.get("chunk_index") or 0),
                    parent_id=c.get("parent_id"),
                    metadata=_load_metadata(c.get("metadata")),
                    scores=scores,
                    graph_context=context,
                )
            )
        return out
