"""Embedding a document's chunks, and the checks an embedder's answer passes first.

Garbage vectors (wrong length, NaN, not numbers) are a provider failure, so the
``embedding_failure`` option decides what happens to the document; left unchecked they would
surface later as a store ``InputError`` that ``store_unembedded`` could not catch.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import KgragError, ProviderError, ProviderResponseError
from ..protocols import EmbeddingProvider, embed_batched
from ..types import Chunk

__all__ = ["check_vector", "check_vectors", "embed_chunks", "embed_or_skip"]


def check_vector(vector: Any, dimensions: int, index: int) -> list[float]:
    """One vector as floats, or ``ProviderResponseError`` naming text ``index`` and what is wrong."""
    try:
        values = [float(x) for x in vector]
    except (TypeError, ValueError):
        raise ProviderResponseError(f"the embedder returned a non-numeric vector for text {index}") from None
    if len(values) != dimensions:
        raise ProviderResponseError(
            f"the embedder returned {len(values)} numbers for text {index}; it declares {dimensions} dimensions"
        )
    if not all(math.isfinite(x) for x in values):
        raise ProviderResponseError(f"the embedder returned NaN or infinity for text {index}")
    return values


def check_vectors(vectors: Sequence[Any], dimensions: int) -> list[list[float]]:
    """All vectors checked at once; the first bad one named as ``check_vector`` does.

    Lists of numbers (what the embedders give) are checked where they are: right lengths and a
    finite sum (finite terms, one C loop per vector; the store makes them floats); turning
    them into an array and back costs CPU a large ingest notices. Anything else goes
    through numpy, and what fails either test through ``check_vector`` (an infinite sum may
    only have overflowed)."""
    if type(vectors) is list and all(type(v) is list and len(v) == dimensions for v in vectors):
        try:
            if math.isfinite(sum(map(sum, vectors))):
                return vectors
        except TypeError:
            pass
    try:
        matrix = np.asarray(vectors, dtype=np.float64)
        good = matrix.ndim == 2 and matrix.shape[1] == dimensions and bool(np.isfinite(matrix).all())
    except (TypeError, ValueError):
        good = False
    if not good:
        return [check_vector(v, dimensions, i) for i, v in enumerate(vectors)]
    return matrix.tolist()


def embed_chunks(embedder: EmbeddingProvider, chunks: Sequence[Chunk], *, batch_size: int) -> None:
    """Embed every chunk but parents (the parent-child strategy stores parents bare); a
    failing or misbehaving embedder raises ``ProviderError`` and sets no vector."""
    parent_ids = {c.parent_id for c in chunks if c.parent_id}
    targets = [c for c in chunks if c.id not in parent_ids]
    if not targets:
        return
    try:
        vectors = embed_batched(embedder, [c.content for c in targets], batch_size=batch_size, input_type="document")
    except KgragError:
        raise
    except Exception as exc:  # Why: a third-party provider's own error is still a provider failure
        raise ProviderError(f"embedder {embedder.name!r} failed: {type(exc).__name__}: {exc}") from exc
    if len(vectors) != len(targets):
        raise ProviderError(f"the embedder returned {len(vectors)} vectors for {len(targets)} texts")
    checked = check_vectors(vectors, embedder.dimensions)
    for c, v in zip(targets, checked):
        c.embedding = v


def embed_or_skip(
    embedder: EmbeddingProvider, chunks: Sequence[Chunk], *, batch_size: int, on_failure: str, log: logging.Logger
) -> list[str]:
    """``embed_chunks`` under the ``embedding_failure`` option (``on_failure``): "raise", or
    the chunks kept without vectors. Returns what was skipped."""
    try:
        embed_chunks(embedder, chunks, batch_size=batch_size)
    except KgragError as exc:
        if on_failure == "raise" or not isinstance(exc, ProviderError):
            raise
        for c in chunks:
            c.embedding = None
        log.warning("embedding failed; storing %d chunks without vectors: %s", len(chunks), exc)
        return [f"embedding failed: {exc}"]
    return []
