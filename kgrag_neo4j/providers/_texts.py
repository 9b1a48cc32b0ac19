"""Input checks and vector helpers every embedder shares."""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..errors import InputError
from ..validation import check_choice

__all__ = ["check_input_type", "check_texts", "l2_normalise"]

INPUT_TYPES = ("document", "query")


def check_texts(texts: Sequence[str]) -> list[str]:
    """Return ``texts`` as a list, or raise ``InputError`` naming the first bad item.

    A bare ``str`` is refused: iterating it would embed its characters one by one. A blank
    text is refused too: it has no features, and a zero vector has no cosine.
    """
    if isinstance(texts, (str, bytes)):
        raise InputError("embed() takes a sequence of texts, not a single string; wrap it in a list")
    items = list(texts)
    for i, text in enumerate(items):
        if not isinstance(text, str):
            raise InputError(f"text {i} is a {type(text).__name__}, not a str")
        if not text.strip():
            raise InputError(f"text {i} is empty; an empty text has no embedding")
    return items


def check_input_type(input_type: str) -> str:
    return check_choice(input_type, "input_type", INPUT_TYPES, error=InputError)


def l2_normalise(vector: Sequence[float]) -> list[float]:
    """``vector`` scaled to length 1; a zero vector stays zero (the caller decides if that is an error)."""
    norm = math.sqrt(math.fsum(x * x for x in vector))
    if norm == 0.0:
        return [0.0] * len(vector)
    return [x / norm for x in vector]
