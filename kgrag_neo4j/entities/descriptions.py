"""An entity's description without a model: the sentence of a chunk that speaks of its name."""

from __future__ import annotations

import re

from .name_words import SPACES, split_sentences

__all__ = [
    "DESCRIPTION_CHARS",
    "describe_name",
]


#: the longest description, in characters (the offline extractor's default)
DESCRIPTION_CHARS = 300


def describe_name(content: str, name: str = "", first: int = -1, *, limit: int = DESCRIPTION_CHARS) -> str:
    """The sentence of ``content`` that speaks of a name: the one holding offset ``first``
    (where a chunk first mentions it); with no offset (a chunk about the name without
    writing it, -1), the first sentence writing ``name`` (any case, whole words), else the
    first sentence. A sentence over several lines (a heading, list items, a table joined to
    it: Markdown keeps no full stop there) is cut to the line holding the name. One line, at
    most ``limit`` characters (an ellipsis when cut)."""
    text = content or ""
    spans = split_sentences(text)
    if not spans:
        return ""
    at = first if 0 <= first < len(text) else -1
    if at < 0 and name.strip():
        words = name.split()
        found = re.search(r"(?<!\w)" + r"\s+".join(re.escape(w) for w in words) + r"(?!\w)", text, re.IGNORECASE)
        at = found.start() if found else -1
    if at < 0:
        start, end = spans[0]
    else:
        start, end = next(((a, b) for a, b in spans if a <= at < b), spans[-1])
        if "\n" in text[start:end] and start <= at < end:
            line_start = text.rfind("\n", start, at) + 1 or start
            line_end = text.find("\n", at, end)
            start, end = max(start, line_start), end if line_end < 0 else line_end
    out = SPACES.sub(" ", text[start:end]).strip()
    if len(out) > limit:
        out = out[: limit - 1].rstrip() + "\u2026"
    return out
