"""A deterministic, dependency-free embedder: signed feature hashing of words and trigrams.

It knows no semantics beyond shared spelling, but it is the same on every machine and in
every process (``hashlib.blake2b``, never the salted built-in ``hash``), needs no model files,
and is fast enough for tests, demos and the CLI's smoke checks.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

from ..protocols import InputType
from ..validation import check_int
from ._texts import check_input_type, check_texts, l2_normalise

__all__ = ["HashingEmbedder"]

_WORD = re.compile(r"\w+")
_WORD_WEIGHT = 1.0
# Why: trigrams let "cat" and "cats" share most of their mass, but a word yields as many
# trigrams as it has letters, so each counts for less than the word itself.
_TRIGRAM_WEIGHT = 0.5


@lru_cache(maxsize=1 << 16)
def _slot(feature: str, dimensions: int) -> tuple[int, float]:
    """The bucket of ``feature`` and its sign (the sign keeps collisions unbiased)."""
    h = int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little")
    return (h >> 1) % dimensions, 1.0 if h & 1 else -1.0


def _features(text: str) -> list[tuple[str, float]]:
    norm = unicodedata.normalize("NFKC", text).lower()
    words = _WORD.findall(norm)
    feats: list[tuple[str, float]] = []
    for word in words:
        feats.append(("w:" + word, _WORD_WEIGHT))
        padded = f"<{word}>"
        feats.extend(("c:" + padded[i : i + 3], _TRIGRAM_WEIGHT) for i in range(len(padded) - 2))
    if not words:
        # Punctuation or symbols only: fall back to the raw characters so the text still
        # gets a non-zero vector of its own.
        padded = f"<{' '.join(norm.split())}>"
        feats.extend(("c:" + padded[i : i + 3], _TRIGRAM_WEIGHT) for i in range(len(padded) - 2))
    return feats


class HashingEmbedder:
    """Unit-length vectors of ``dimensions`` floats from hashed words and character trigrams.

    Symmetric: ``input_type`` is checked but does not change the vector. Texts that share
    words or spellings get a higher cosine than texts that share none.
    """

    def __init__(self, dimensions: int = 256) -> None:
        check_int(dimensions, "HashingEmbedder dimensions", minimum=2)
        self.dimensions = dimensions
        self.name = f"hashing-{dimensions}"

    @property
    def description(self) -> str:
        return f"{self.name} (feature hashing of words and trigrams; offline, no model; {self.dimensions} dims)"

    def __repr__(self) -> str:
        return f"HashingEmbedder(dimensions={self.dimensions})"

    def embed(self, texts: Sequence[str], *, input_type: InputType = "document") -> list[list[float]]:
        check_input_type(input_type)
        return [self._embed_one(text) for text in check_texts(texts)]

    def _embed_one(self, text: str) -> list[float]:
        vector = [0.0] * self.dimensions
        for feature, weight in _features(text):
            bucket, sign = _slot(feature, self.dimensions)
            vector[bucket] += sign * weight
        return l2_normalise(vector)
