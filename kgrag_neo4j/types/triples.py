"""Subject-predicate-object triples (the triple knowledge graph): the value types, the predicate
allow-list and the records the triple store hands back (expansion hits, confidence updates).

A triple is an ``(:Entity)-[:RELATED_TO {type: predicate}]->(:Entity)`` edge. Predicates come
from an allow-list: the nine default predicates, plus any the caller declares.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from ..errors import InputError

__all__ = [
    "ParsedTriples",
    "CAUSED_BY",
    "CONTAINS",
    "ConfidenceUpdate",
    "DEFAULT_PREDICATES",
    "EXPANSION_PREDICATES",
    "ExpandedNode",
    "FOLLOWS",
    "IN_SESSION",
    "LEARNED_FROM",
    "MAX_TERM_CHARS",
    "PREDICATE_DESCRIPTIONS",
    "PredicateRegistry",
    "REFLECTS_ON",
    "RELATED_TO",
    "RESOLVED_BY",
    "SIMILAR_TO",
    "Triple",
    "normalise_predicate",
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
# The predicates the two-phase triple retrieval follows when it expands vector results.
EXPANSION_PREDICATES: tuple[str, ...] = (RELATED_TO, RESOLVED_BY, CAUSED_BY, SIMILAR_TO)

_PREDICATE_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
_PREDICATE_SEPARATORS = re.compile(r"[\s\-]+")
MAX_TERM_CHARS = 512


def normalise_predicate(name: str) -> str:
    """``"Caused By"`` / ``"caused-by"`` -> ``caused_by``; not validated (see the registry)."""
    if not isinstance(name, str):
        raise InputError(f"a predicate must be a string, got {type(name).__name__}")
    return _PREDICATE_SEPARATORS.sub("_", name.strip().strip("`'\"")).lower()


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
            raise InputError(f"predicate {self.predicate!r} is not a valid name (^[a-z][a-z0-9_]{{0,63}}$)")
        if not isinstance(self.metadata, Mapping):
            raise InputError("triple metadata must be a mapping of strings")
        object.__setattr__(self, "metadata", {str(k): str(v) for k, v in self.metadata.items()})

    def key(self) -> tuple[str, str, str]:
        return (self.subject, self.predicate, self.object)


class PredicateRegistry:
    """The allowed predicates: the nine defaults plus ``extra`` (each must match
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

    def with_extra(self, *names: str) -> PredicateRegistry:
        return PredicateRegistry(sorted((self._names - DEFAULT_PREDICATES) | set(names)))

    def validate(self, name: str) -> str:
        """The normalised predicate if allowed; ``InputError`` naming the allowed ones if not."""
        p = normalise_predicate(name)
        if p not in self._names:
            raise InputError(f"unknown predicate {name!r}; allowed: {', '.join(self.names)}")
        return p


@dataclass(frozen=True, slots=True)
class ExpandedNode:
    """An entity found by graph expansion (phase 2 of the two-phase triple retrieval).

    ``predicate`` is the type of the edge that reached it from ``from_name`` at hop ``depth``
    (1 = a neighbour of a start entity); ``outgoing`` is True when that edge points from
    ``from_name`` to this node (``from_name -predicate-> name``), False when it points the
    other way (``name -predicate-> from_name``). ``seed`` is what the
    expansion started from: a start name, or the id of the chunk whose mention led to it.
    """

    name: str
    predicate: str
    from_name: str
    depth: int
    type: str = ""
    outgoing: bool = True
    seed: str = ""

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "type": self.type,
            "predicate": self.predicate,
            "from": self.from_name,
            "depth": self.depth,
            "outgoing": self.outgoing,
            "seed": self.seed,
        }


@dataclass(frozen=True, slots=True)
class ConfidenceUpdate:
    """One learning whose confidence a propagation raised from ``previous`` to ``confidence``."""

    id: str
    name: str
    type: str
    previous: float
    confidence: float


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
