"""``similar_to`` edges for many chunks at once: exact in memory for the chunks at hand, the
vector index for the rest of the namespace.

A folder ingest links each new chunk to its ``top_k`` nearest chunks of the namespace whose
cosine is at least ``threshold``. Asking the database for every chunk (a vector-index call
inside the write) is a read per chunk; here the chunks of the run so far (up to
``WINDOW_CHUNKS`` of them) are compared exactly with numpy, a batch at a time, and the vector
index (``nearest``, one read per batch) is asked only when the namespace holds chunks that are
not in that window: chunks stored before the run, or older ones of a long run.

Pure apart from the ``nearest`` callable it is given; nothing here touches the store.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np

from ..blas import one_blas_thread
from ..types import ChunkEdge, RelationType
from ..validation import check_int, check_number

__all__ = ["Nearest", "SimilarityLinker", "WINDOW_CHUNKS", "similar_to_edge"]

#: chunks compared exactly in memory (float32: 8 MB at 256 dimensions); beyond them the
#: vector index answers for the older ones
WINDOW_CHUNKS = 8_192

Nearest = Callable[[Sequence[str], Sequence[Sequence[float]]], Sequence[Sequence[tuple[str, float]]]]
"""``nearest(ids, vectors)``: for each vector, ``(chunk id, cosine)`` of its nearest stored chunks
of the namespace (the chunk itself excluded), best first: a vector-index read."""


def similar_to_edge(source: str, target: str, cosine: float) -> ChunkEdge:
    """The edge kgrag stores for a similar pair: weight = cosine (at most 1.0)."""
    weight = min(1.0, float(cosine))
    return ChunkEdge(
        source, target, RelationType.SIMILAR_TO, weight, description=f"cosine similarity {weight:.3f}", origin="similarity"
    )


class SimilarityLinker:
    """Give it chunks batch by batch (``link``); it returns their ``similar_to`` edges.

    ``nearest`` answers for the stored chunks outside the window; ``stored_outside`` says
    whether any exist when the linker starts (a namespace empty before a run needs no index
    call until the run outgrows the window). ``preload`` fills the window with stored chunks
    (``kgrag edges build`` over a namespace that fits in it is then exact and needs no index).
    """

    def __init__(
        self,
        *,
        top_k: int = 5,
        threshold: float = 0.75,
        nearest: Nearest | None = None,
        stored_outside: bool = False,
        window: int = WINDOW_CHUNKS,
    ):
        self.top_k = check_int(top_k, "similarity top k", minimum=1)
        self.threshold = check_number(threshold, "similarity threshold (a cosine)", minimum=-1.0, maximum=1.0)
        self.nearest = nearest
        self.stored_outside = stored_outside
        self.window = window
        self._ids: list[str] = []
        self._matrix = np.zeros((0, 0), dtype=np.float32)
        self._stored_of: dict[str, list[str]] = {}  # document id -> its preloaded chunk ids
        #: index reads made (one per ``link`` call that needed the index)
        self.index_calls = 0

    def preload(
        self, ids: Sequence[str], vectors: Sequence[Sequence[float]] | np.ndarray, *, documents: Sequence[str] = ()
    ) -> None:
        """Put stored chunks into the window (no edges are made for them). ``documents``: the
        document of each, so ``forget_documents`` can take a replaced document's out."""
        self._append(list(ids), _unit(vectors))
        for chunk_id, document_id in zip(ids, documents):
            self._stored_of.setdefault(document_id, []).append(chunk_id)

    def forget_documents(self, document_ids: Iterable[str]) -> None:
        """Take the preloaded chunks of these documents out of the window: a new version of
        each is being linked, and its old chunks, about to be dropped, must not take the
        places of real neighbours (they are the new chunks' nearest, by far)."""
        gone = {c for d in document_ids for c in self._stored_of.pop(d, ())}
        if gone:
            keep = [i for i, c in enumerate(self._ids) if c not in gone]
            self._ids = [self._ids[i] for i in keep]
            self._matrix = self._matrix[keep]

    def link(self, ids: Sequence[str], vectors: Sequence[Sequence[float]] | np.ndarray, *, add: bool = True) -> list[ChunkEdge]:
        """Edges from each of ``ids`` to its ``top_k`` nearest chunks: the window (which, with
        ``add``, then takes these chunks in) and, when needed, the vector index."""
        ids = list(ids)
        if not ids:
            return []
        unit = _unit(vectors)
        if len(unit) != len(ids):
            raise ValueError(f"{len(ids)} ids but {len(unit)} vectors")
        known = self._ids + ids if add else self._ids
        matrix = np.concatenate([self._matrix, unit]) if add and len(self._matrix) else (unit if add else self._matrix)
        candidates: list[dict[str, float]] = [{} for _ in ids]
        if len(known):
            self._exact(ids, unit, known, matrix, candidates)
        if self.nearest is not None and self.stored_outside:
            self.index_calls += 1
            for found, hits in zip(candidates, self.nearest(ids, unit.tolist())):
                for target, cosine in hits:
                    if cosine > found.get(target, -2.0):
                        found[target] = float(cosine)
        edges: list[ChunkEdge] = []
        for source, found in zip(ids, candidates):
            found.pop(source, None)
            # an edge's weight is its cosine, so only a positive one makes an edge
            best = sorted(((c, t) for t, c in found.items() if c >= self.threshold and c > 0.0), key=lambda x: (-x[0], x[1]))
            edges += [similar_to_edge(source, t, c) for c, t in best[: self.top_k]]
        if add:
            self._append(ids, unit)
        return edges

    def _exact(self, ids: list[str], unit: np.ndarray, known: list[str], matrix: np.ndarray, out: list[dict[str, float]]) -> None:
        k = min(self.top_k + 1, len(known))  # + 1: a chunk finds itself first
        for start in range(0, len(ids), 1024):
            with one_blas_thread():  # beside the database writing on the same machine
                sims = unit[start : start + 1024] @ matrix.T
            if k < sims.shape[1]:
                top = np.argpartition(-sims, k - 1, axis=1)[:, :k]
            else:
                top = np.broadcast_to(np.arange(sims.shape[1]), (sims.shape[0], sims.shape[1]))
            for row, cols in enumerate(top):
                found = out[start + row]
                for j in cols:
                    cosine = float(sims[row, j])
                    target = known[j]
                    if cosine > found.get(target, -2.0):
                        found[target] = cosine

    def _append(self, ids: list[str], unit: np.ndarray) -> None:
        if not ids:
            return
        self._ids += ids
        self._matrix = np.concatenate([self._matrix, unit]) if len(self._matrix) else unit.copy()
        overflow = len(self._ids) - self.window
        if overflow > 0:
            # the oldest leave the window; the index answers for them from now on (they were
            # handed to the writer batches ago)
            self._ids = self._ids[overflow:]
            self._matrix = self._matrix[overflow:]
            self.stored_outside = True


def _unit(vectors: Iterable[Sequence[float]] | np.ndarray) -> np.ndarray:
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.ndim != 2:
        matrix = matrix.reshape(len(matrix), -1) if matrix.size else np.zeros((0, 0), dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
