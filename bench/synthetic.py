"""Synthetic corpora for the speed benchmarks: random unit vectors, a random typed weighted
chunk graph, and query vectors with real near neighbours. Everything comes from one seed, so
every system and every run sees the same data."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Iterator

import numpy as np

from kgrag_neo4j.ids import content_hash
from kgrag_neo4j.store import Neo4jStore
from kgrag_neo4j.types import Chunk, ChunkEdge, Document, RelationType

__all__ = ["SyntheticCorpus", "chunk_id", "load_corpus", "random_edges", "store_random_edges"]

DIMENSIONS = 384
SEED = 20240601
WORDS = (
    "graph retrieval neo4j chunk vector index hop edge weight relation document entity river "
    "city museum county court school film album river mountain island treaty war king queen "
    "novel poet painter bridge station harbour railway election senate army ship island"
).split()
# relation kinds of the random graph: every kind but ``sequence``, which links neighbours
EDGE_CALL = 10_000  # edges per store_edges call (one transaction each)
RANDOM_RELATIONS = [r for r in RelationType if r is not RelationType.SEQUENCE]


def chunk_id(i: int) -> str:
    return f"c{i:07d}"


@dataclass
class SyntheticCorpus:
    """``n`` chunks of ``dims`` float32 unit vectors, in documents of ``doc_size`` chunks."""

    n: int
    dims: int = DIMENSIONS
    doc_size: int = 5000
    seed: int = SEED

    def vectors(self, start: int, stop: int) -> np.ndarray:
        """Rows ``start:stop``, generated block by block so a 300k corpus never sits in
        memory as Python floats (block ``b`` is the same whatever slice asks for it)."""
        block = 10_000
        parts = []
        for b in range(start // block, (stop - 1) // block + 1):
            rng = np.random.default_rng([self.seed, b])
            m = rng.standard_normal((block, self.dims), dtype=np.float32)
            m /= np.linalg.norm(m, axis=1, keepdims=True)
            lo, hi = max(start, b * block) - b * block, min(stop, (b + 1) * block) - b * block
            parts.append(m[lo:hi])
        return np.concatenate(parts) if parts else np.zeros((0, self.dims), np.float32)

    def text(self, i: int) -> str:
        rng = np.random.default_rng([self.seed, 7, i])
        words = " ".join(WORDS[j] for j in rng.integers(0, len(WORDS), 24))
        return f"Synthetic chunk {i}: {words}."

    def documents(self) -> Iterator[tuple[Document, list[Chunk]]]:
        for d, start in enumerate(range(0, self.n, self.doc_size)):
            stop = min(self.n, start + self.doc_size)
            doc_id = f"doc_{d:05d}"
            vecs = self.vectors(start, stop)
            chunks = [
                Chunk(
                    id=chunk_id(i),
                    document_id=doc_id,
                    content=self.text(i),
                    chunk_index=i - start,
                    embedding=vecs[i - start].tolist(),
                    token_count=40,
                )
                for i in range(start, stop)
            ]
            doc = Document(
                id=doc_id,
                source=f"synthetic/{doc_id}",
                title=f"Synthetic document {d}",
                content_hash=content_hash(f"{self.seed}:{self.n}:{d}"),
            )
            yield doc, chunks

    def queries(self, count: int = 200, *, noise: float = 0.35) -> list[list[float]]:
        """Query vectors near random stored chunks (so they have real neighbours), the
        same for every system."""
        rng = np.random.default_rng([self.seed, 99])
        picks = rng.choice(self.n, size=count, replace=count > self.n)
        out = []
        for i in picks:
            v = self.vectors(int(i), int(i) + 1)[0] + noise * rng.standard_normal(self.dims).astype(np.float32) / np.sqrt(self.dims)
            out.append((v / np.linalg.norm(v)).astype(np.float64).tolist())
        return out


def load_corpus(store: Neo4jStore, corpus: SyntheticCorpus, *, progress: bool = True) -> float:
    """Write the corpus with ``store_document`` (one transaction per document); returns seconds."""
    t0 = time.perf_counter()
    for k, (doc, chunks) in enumerate(corpus.documents(), start=1):
        store.store_document(doc, chunks)
        if progress and (k % 10 == 0 or k * corpus.doc_size >= corpus.n):
            done = min(corpus.n, k * corpus.doc_size)
            print(f"    loaded {done:,}/{corpus.n:,} chunks ({done / (time.perf_counter() - t0):,.0f}/s)", flush=True)
    return time.perf_counter() - t0


def random_edges(n: int, *, out_degree: int = 5, doc_size: int = 5000, seed: int = SEED, sequence: bool = True,
                 salt: int = 0) -> Iterator[list[ChunkEdge]]:
    """Batches of edges: ``out_degree`` random typed edges per chunk (weights in (0.05, 1]),
    plus a ``sequence`` edge from each chunk to the next of its document."""
    batch = 10_000
    for start in range(0, n, batch):
        stop = min(n, start + batch)
        rng = np.random.default_rng([seed, 13, salt, start])
        edges: list[ChunkEdge] = []
        targets = rng.integers(0, n - 1, size=(stop - start, out_degree))
        weights = rng.uniform(0.05, 1.0, size=(stop - start, out_degree))
        kinds = rng.integers(0, len(RANDOM_RELATIONS), size=(stop - start, out_degree))
        for row, i in enumerate(range(start, stop)):
            for k in range(out_degree):
                t = int(targets[row, k])
                t = t + 1 if t >= i else t  # never a self edge
                edges.append(ChunkEdge(chunk_id(i), chunk_id(t), RANDOM_RELATIONS[kinds[row, k]],
                                       round(float(weights[row, k]), 4), description="random", origin="bench"))
            if sequence and (i + 1) % doc_size != 0 and i + 1 < n:
                edges.append(ChunkEdge(chunk_id(i), chunk_id(i + 1), RelationType.SEQUENCE, 1.0, origin="sequence"))
        yield edges


def store_random_edges(store: Neo4jStore, n: int, *, out_degree: int = 5, doc_size: int = 5000,
                       sequence: bool = True, salt: int = 0, progress: bool = True) -> tuple[int, float]:
    """Write ``random_edges`` with ``store.store_edges``; returns (edges stored, seconds)."""
    t0 = time.perf_counter()
    total = 0
    for edges in random_edges(n, out_degree=out_degree, doc_size=doc_size, sequence=sequence, salt=salt):
        # one store_edges call is one transaction; on an idle machine one 60k-edge call ran
        # at 17.5k edges/s and 2k-edge calls at 23k/s, so the size of a call hardly matters
        for start in range(0, len(edges), EDGE_CALL):
            total += store.store_edges(edges[start:start + EDGE_CALL])
    if progress:
        took = time.perf_counter() - t0
        print(f"    stored {total:,} edges in {took:.1f}s ({total / took:,.0f}/s)", flush=True)
    return total, time.perf_counter() - t0
