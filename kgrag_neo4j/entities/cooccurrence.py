"""Co-occurrence of entities in a window of text: the relation type, its weight, and where
mentions stand (their sentence, the words between two of them)."""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence

__all__ = [
    "CO_OCCURS",
    "WORDS",
    "cooccurrence_weight",
    "sentence_of",
    "word_gap",
]


CO_OCCURS = "CO_OCCURS"


def cooccurrence_weight(count: float) -> float:
    """``count / (count + 1)``: 1 shared window -> 0.5, 2 -> 0.67, 9 -> 0.9; never 1. ``count``
    may be a strength (a sum of closeness values, see ``OfflineEntityExtractor``).

    It needs no corpus-wide normaliser, so a pair's weight does not change when unrelated
    documents are added.
    """
    return count / (count + 1.0)


WORDS = re.compile(r"\w+")


def sentence_of(spans: Sequence[tuple[int, int]], position: int) -> int:
    for i, (start, end) in enumerate(spans):
        if start <= position < end:
            return i
    return max(0, len(spans) - 1)


def word_gap(word_starts: Sequence[int], a: Sequence[tuple[int, int]], b: Sequence[tuple[int, int]]) -> int:
    """Words between the nearest mentions of two names; mentions are (start, end) spans and
    ``word_starts`` the sorted start offsets of the chunk's words."""
    best: int | None = None
    for x in a:
        for y in b:
            first, second = (x, y) if x[0] <= y[0] else (y, x)
            # words starting in [end of the first mention, start of the second)
            gap = max(0, bisect.bisect_left(word_starts, second[0]) - bisect.bisect_left(word_starts, first[1]))
            if best is None or gap < best:
                best = gap
    return best or 0
