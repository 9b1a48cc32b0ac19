"""Parsing subject-predicate-object triples out of model output.

Model output is parsed leniently (bullets, markdown table pipes, code fences, JSON) and
validated strictly: a line that does not give three non-empty parts with an allowed predicate
is dropped and counted. The value types and the predicate allow-list live in
:mod:`kgrag_neo4j.types.triples`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..errors import InputError
from ..types.triples import (
    MAX_TERM_CHARS,
    ParsedTriples,
    PredicateRegistry,
    Triple,
    normalise_predicate,
)

__all__ = ["parse_triples"]

_SPACES = re.compile(r"\s+")
_BULLET = re.compile(r"^\s*(?:[-*\u2022+]|\d+[.)])\s+")
_FENCE_LINE = re.compile(r"^\s*```")


def _clean_term(value: str) -> str:
    return _SPACES.sub(" ", value).strip().strip("`").strip()


def _strip_fences(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not _FENCE_LINE.match(line))


def parse_triples(text: str, registry: PredicateRegistry) -> ParsedTriples:
    """Parse ``Subject|Predicate|Object`` lines, or JSON ``[{subject, predicate, object}]`` /
    ``{"triples": [...]}`` (an item may carry a ``metadata`` object).

    Blank lines, code fences and ``#`` comments are ignored; bullets and outer table pipes are
    stripped; predicates are normalised (``Caused By`` -> ``caused_by``). Dropped: a line
    without exactly three parts, an empty part, a predicate not in ``registry``, a term longer
    than 512 characters. Duplicates are kept once and not counted as dropped.
    """
    if not isinstance(text, str):
        raise InputError(f"parse_triples needs text, got {type(text).__name__}")
    body = _strip_fences(text).strip()
    items: list[Any] | None = None
    if body and body[0] in "[{":
        from ..replies import TriplesReply  # Why here: pydantic is slow to import

        try:
            items = TriplesReply.model_validate(json.loads(body)).triples
        except ValueError:  # not JSON, or JSON of another shape (ValidationError): read lines
            items = None
    candidates: list[tuple[Any, Any, Any, Any, str]] = []  # subject, predicate, object, metadata, source
    if items is not None:
        for item in items:
            if isinstance(item, dict):
                candidates.append(
                    (item.get("subject"), item.get("predicate"), item.get("object"), item.get("metadata"), repr(item)[:80])
                )
            else:
                candidates.append((None, None, None, None, repr(item)[:80]))
    else:
        for raw in body.splitlines():
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            line = _BULLET.sub("", line)
            if line.startswith("|") and line.endswith("|") and len(line) > 1:
                line = line[1:-1]
            parts = line.split("|")
            if len(parts) != 3:
                candidates.append((None, None, None, None, line[:80]))
                continue
            candidates.append((parts[0], parts[1], parts[2], None, line[:80]))

    triples: list[Triple] = []
    seen: set[tuple[str, str, str]] = set()
    problems: list[str] = []
    for subject, predicate, obj, metadata, source in candidates:
        if not all(isinstance(v, str) for v in (subject, predicate, obj)):
            problems.append(f"not subject|predicate|object: {source}")
            continue
        s, o = _clean_term(subject), _clean_term(obj)
        p = normalise_predicate(predicate)
        if not s or not o or not p:
            problems.append(f"empty part: {source}")
            continue
        if p not in registry:
            problems.append(f"unknown predicate {p!r}: {source}")
            continue
        if len(s) > MAX_TERM_CHARS or len(o) > MAX_TERM_CHARS:
            problems.append(f"term longer than {MAX_TERM_CHARS} characters: {source}")
            continue
        meta = metadata if isinstance(metadata, dict) else {}
        triple = Triple(s, p, o, meta)
        if triple.key() in seen:
            continue
        seen.add(triple.key())
        triples.append(triple)
    return ParsedTriples(triples=tuple(triples), dropped=len(problems), problems=tuple(problems))
