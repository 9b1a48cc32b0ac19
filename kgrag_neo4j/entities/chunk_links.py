"""Chunks linked through the entities they share, and names taken from document titles.

Both are pure: the store reads mentions and titles, these functions decide, the store writes.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from ..types import ChunkEdge, RelationType
from ..validation import check_int

__all__ = ["ENTITY_EDGE_ORIGIN", "entity_chunk_edges", "reference_updates", "title_name"]

#: the ``origin`` of ``references`` edges made from shared entities (replaced as a set)
ENTITY_EDGE_ORIGIN = "entities"

_DOCUMENT_SUFFIXES = (".txt", ".text", ".md", ".markdown", ".mdx", ".rst", ".html", ".htm", ".xhtml", ".pdf")
_QUALIFIER = re.compile(r"\s*\([^()]*\)\s*$")
_SEPARATORS = re.compile(r"[_\s]+")
_MAX_TITLE_WORDS = 8


def title_name(title: str) -> str:
    """The entity name a document title stands for, or "" when it names nothing.

    A file suffix goes ("Shawn Levy.txt" -> "Shawn Levy"), underscores become spaces, and a
    trailing qualifier in parentheses goes ("Kiss and Tell (1945 film)" -> "Kiss and Tell"),
    since other texts write the name without it. A title of more than eight words is a
    heading, not a name; a title without letters names nothing, and neither does a single
    lower-case word ("notes.txt", "index.md": a file name, not a name).
    """
    if not isinstance(title, str):
        return ""
    name = title.strip()
    lower = name.lower()
    for suffix in _DOCUMENT_SUFFIXES:
        if lower.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
            break
    name = _SEPARATORS.sub(" ", name).strip()
    unqualified = _QUALIFIER.sub("", name).strip()
    if unqualified:
        name = unqualified
    words = name.split()
    if not any(c.isalpha() for c in name) or len(words) > _MAX_TITLE_WORDS or len(name) < 2:
        return ""
    if len(words) == 1 and not any(c.isupper() for c in name):
        return ""
    return name


def entity_chunk_edges(mentions: Mapping[str, Sequence[str]], *, max_chunks: int = 10, per_chunk: int = 10) -> list[ChunkEdge]:
    """``references`` edges between chunks that mention the same entity.

    An entity found in ``df`` chunks adds ``1 / (df - 1)`` to the weight of each pair of them
    (a name only two chunks share links them at full weight, a common one barely), capped at
    1.0; an entity in more than ``max_chunks`` chunks links nothing (it is everywhere, so it
    says nothing about a pair). Each chunk keeps its ``per_chunk`` heaviest pairs; ties in
    weight are broken by the ids, so the result does not depend on input order. The link is
    symmetric, so each kept pair is written both ways (a directed traversal follows it from
    either end).
    """
    check_int(max_chunks, "max_chunks", minimum=2)
    check_int(per_chunk, "per_chunk", minimum=1)
    by_entity: dict[str, list[str]] = defaultdict(list)
    for chunk, entities in mentions.items():
        for e in set(entities):
            by_entity[e].append(chunk)
    weight: dict[tuple[str, str], float] = defaultdict(float)
    for chunks in by_entity.values():
        df = len(chunks)
        if df < 2 or df > max_chunks:
            continue
        ordered = sorted(chunks)
        for i, a in enumerate(ordered):
            for b in ordered[i + 1 :]:
                weight[(a, b)] += 1.0 / (df - 1)
    best: dict[str, list[tuple[float, str, str]]] = defaultdict(list)
    for (a, b), w in weight.items():
        best[a].append((w, a, b))
        best[b].append((w, a, b))
    keep: set[tuple[str, str]] = set()
    for edges in best.values():
        for _, a, b in sorted(edges, key=lambda x: (-x[0], x[1], x[2]))[:per_chunk]:
            keep.add((a, b))
    out = []
    for a, b in sorted(keep):
        w = round(min(1.0, weight[(a, b)]), 4)
        for source, target in ((a, b), (b, a)):
            out.append(
                ChunkEdge(source, target, RelationType.REFERENCES, w, description="shared entities", origin=ENTITY_EDGE_ORIGIN)
            )
    return out


def reference_updates(
    found: Sequence[Mapping[str, Any]], *, per_chunk: int = 10, unit: int = 2520
) -> tuple[list[tuple[str, str, float, bool]], list[tuple[str, str]]]:
    """The ``references`` edges of some chunks, as :func:`entity_chunk_edges` gives them for
    the whole namespace, decided chunk by chunk.

    ``found``: per chunk ``{"id", "candidates": [[other id, weight in 1/unit]], "edges":
    [[other id, picked by this chunk, picked by the other]]}`` (the store's
    ``entity_graph/reference_candidates``). A chunk picks its ``per_chunk`` heaviest
    candidates (ties by the pair's ids, as the whole-namespace rule); a pair has its two
    edges while either end picks it. The other end's pick is the one stored, unless that
    chunk is in ``found`` too. Returns the directed edges to write ``(source, target,
    weight, picked by source)`` and the pairs to drop."""
    check_int(per_chunk, "per_chunk", minimum=1)
    picks: dict[str, set[str]] = {}
    weights: dict[str, dict[str, int]] = {}
    for row in found:
        a = row["id"]
        cands = {str(b): int(w) for b, w in row["candidates"]}
        weights[a] = cands
        ranked = sorted(cands, key=lambda b: (-cands[b], min(a, b), max(a, b)))  # noqa: B023 (used at once)
        picks[a] = set(ranked[:per_chunk])
    updates: dict[tuple[str, str], tuple[float, bool]] = {}
    drop: set[tuple[str, str]] = set()
    for row in found:
        a = row["id"]
        stored_back = {str(x): bool(back) for x, _mine, back in row["edges"]}
        for b in sorted(set(weights[a]) | set(stored_back)):
            w = weights[a].get(b)
            mine = b in picks[a]
            theirs = (a in picks[b]) if b in picks else stored_back.get(b, False)
            pair = (min(a, b), max(a, b))
            if w is None or not (mine or theirs):
                if b in stored_back:
                    drop.add(pair)
                continue
            weight = round(min(1.0, w / unit), 4)
            updates[(a, b)] = (weight, mine)
            updates[(b, a)] = (weight, theirs)
    rows = [(s, t, w, p) for (s, t), (w, p) in sorted(updates.items()) if (min(s, t), max(s, t)) not in drop]
    return rows, sorted(drop)
