"""Subject-predicate-object triples (Lango's knowledge graph) and their parsing.

A triple is an ``(:Entity)-[:RELATED_TO {type: predicate}]->(:Entity)`` edge. Predicates come
from an allow-list: Lango's nine, plus any the caller declares. Model output is parsed
leniently (bullets, markdown table pipes, code fences, JSON) and validated strictly: a line
that does not give three non-empty parts with an allowed predicate is dropped and counted.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping

from ..errors import InputError

__all__ = [
    "CAUSED_BY",
    "CONTAINS",
    "DEFAULT_PREDICATES",
    "EXPANSION_PREDICATES",
    "FOLLOWS",
    "IN_SESSION",
    "LEARNED_FROM",
    "PREDICATE_DESCRIPTIONS",
    "ParsedTriples",
    "PredicateRegistry",
    "REFLECTS_ON",
    "RELATED_TO",
    "RESOLVED_BY",
    "SIMILAR_TO",
    "Triple",
    "normalise_predicate",
    "parse_triples",
]

RELATED_TO = "related_to"
CAUSED_BY = "caused_by"
RESOLVED_BY = "resolved_by"
FOLLOWS = "follows"
SIMILAR_TO = "similar_to"
CONTAINS = "contains"
IN_SESSION = "in_session"
REFLECTS_ON = "reflects_on"
LEARNED_FROM = "learned_from"

PREDICATE_DESCRIPTIONS: Mapping[str, str] = {
    RELATED_TO: "semantic relationship",
    CAUSED_BY: "causal: the subject (an effect) is caused by the object",
    RESOLVED_BY: "resolution: the subject (an error) is resolved by the object (a fix)",
    FOLLOWS: "temporal: the subject comes after the object",
    SIMILAR_TO: "similarity",
    CONTAINS: "containment: the subject contains the object",
    IN_SESSION: "session membership: the subject happened in the object session",
    REFLECTS_ON: "reflection: the subject reflects on the object",
    LEARNED_FROM: "provenance: the subject was learned from the object",
}
DEFAULT_PREDICATES: frozenset[str] = frozenset(PREDICATE_DESCRIPTIONS)
# The predicates Lango's graph RAG follows when it expands vector results.
EXPANSION_PREDICATES: tuple[str, ...] = (RELATED_TO, RESOLVED_BY, CAUSED_BY, SIMILAR_TO)

_PREDICATE_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
_PREDICATE_SEPARATORS = re.compile(r"[\s\-]+")
_SPACES = re.compile(r"\s+")
_BULLET = re.compile(r"^\s*(?:[-*\u2022+]|\d+[.)])\s+")
_FENCE_LINE = re.compile(r"^\s*```")
MAX_TERM_CHARS = 512


def normalise_predicate(name: str) -> str:
    """``"Caused By"`` / ``"caused-by"`` -> ``caused_by``; not validated (see the registry)."""
    if not isinstance(name, str):
        raise InputError(f"a predicate must be a string, got {type(name).__name__}")
    return _PREDICATE_SEPARATORS.sub("_", name.strip().strip("`'\"")).lower()


def _clean_term(value: str) -> str:
    return _SPACES.sub(" ", value).strip().strip("`").strip()


@dataclass(frozen=True, slots=True)
class Triple:
    """``subject -predicate-> object``; metadata is free-form text pairs (not part of
    equality: the same fact with other metadata is the same triple)."""

    subject: str
    predicate: str
    object: str
    metadata: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        for label in ("subject", "object"):
            value = getattr(self, label)
            if not isinstance(value, str) or not value.strip():
                raise InputError(f"a triple needs a non-empty {label}, got {value!r}")
            if len(value) > MAX_TERM_CHARS:
                raise InputError(f"triple {label} is longer than {MAX_TERM_CHARS} characters")
        if not isinstance(self.predicate, str) or not _PREDICATE_NAME.match(self.predicate):
            raise InputError(
                f"predicate {self.predicate!r} is not a valid name (^[a-z][a-z0-9_]{{0,63}}$)"
            )
        if not isinstance(self.metadata, Mapping):
            raise InputError("triple metadata must be a mapping of strings")
        object.__setattr__(self, "metadata", {str(k): str(v) for k, v in self.metadata.items()})

    def key(self) -> tuple[str, str, str]:
        return (self.subject, self.predicate, self.object)


class PredicateRegistry:
    """The allowed predicates: Lango's nine plus ``extra`` (each must match
    ``^[a-z][a-z0-9_]{0,63}$``). Immutable; ``with_extra`` returns a wider one."""

    __slots__ = ("_names",)

    def __init__(self, extra: Iterable[str] = ()) -> None:
        if isinstance(extra, str):
            raise InputError("extra predicates must be a list of names, not one string")
        names = set(DEFAULT_PREDICATES)
        for name in extra:
            if not isinstance(name, str) or not _PREDICATE_NAME.match(name):
                raise InputError(
                    f"predicate {name!r} is not a valid name: lower case letters, digits and "
                    "underscores, starting with a letter, at most 64 characters"
                )
            names.add(name)
        self._names = frozenset(names)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(sorted(self._names))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._names

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self._names)

    def __repr__(self) -> str:
        extra = sorted(self._names - DEFAULT_PREDICATES)
        return f"PredicateRegistry(extra={extra!r})"

    def with_extra(self, *names: str) -> "PredicateRegistry":
        return PredicateRegistry(sorted((self._names - DEFAULT_PREDICATES) | set(names)))

    def validate(self, name: str) -> str:
        """The normalised predicate if allowed; ``InputError`` naming the allowed ones if not."""
        p = normalise_predicate(name)
        if p not in self._names:
            raise InputError(f"unknown predicate {name!r}; allowed: {', '.join(self.names)}")
        return p


@dataclass(frozen=True, slots=True)
class ParsedTriples:
    """Valid triples (first occurrence of each kept, in order), how many candidates were
    dropped, and why (one short reason per dropped candidate)."""

    triples: tuple[Triple, ...]
    dropped: int
    problems: tuple[str, ...] = ()

    def __iter__(self) -> Iterator[Triple]:
        return iter(self.triples)

    def __len__(self) -> int:
        return len(self.triples)


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
        from ..replies import TriplesReply  # Why here: pydantic costs ~0.2 s at import

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
