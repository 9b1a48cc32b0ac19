"""Error-resolution tracking on the triple graph (the "self-learning graph" of the triples seed).

When a tool fails, :class:`ErrorResolutionRecorder` records::

    error --caused_by--> tool        error --in_session--> session
    error --similar_to--> other error   (errors whose pattern is close enough)

when a fix is applied::

    error --resolved_by--> fix       fix --learned_from--> session

and when a tool succeeds after failures it propagates confidence (``propagate_confidence``
of the store: errors the tool caused -> their similar errors -> the fixes resolving those,
each raised by ``0.1 * propagation_rate``, 0.03 with the default 0.3).

An error node is named by the *pattern* of its message: numbers, quoted strings, hex ids,
addresses and paths are masked (:func:`error_pattern`), so "timeout after 30s" and "timeout
after 45s" are the same error. Two patterns are similar when their word sets overlap by at
least ``similarity_threshold`` (Jaccard, :func:`similar_patterns`). Node names carry a
kind prefix (``tool:``, ``error:``, ``fix:``, ``session:``) unless given one.

Writes go straight to the store, or through a :class:`~kgrag_neo4j.triples.GraphBuffer` when
one is given (``record_success`` flushes it first, so propagation sees every failure).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigurationError, InputError
from ..protocols import TripleStore
from ..types.triples import CAUSED_BY, IN_SESSION, LEARNED_FROM, RESOLVED_BY, SIMILAR_TO, Triple
from ..validation import check_number

__all__ = ["ErrorResolutionRecorder", "FailureRecord", "error_pattern", "node_name", "similar_patterns"]

_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`")
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)
_PATH = re.compile(r"(?:(?<=\s)|^)(?:[A-Za-z]:)?[/\\][^\s:]+")
_ADDRESS = re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b")
_HEX = re.compile(r"\b(?:0x[0-9a-f]+|[0-9a-f]{8,}(?:-[0-9a-f]{4,})*)\b", re.IGNORECASE)
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_SPACES = re.compile(r"\s+")
_WORD = re.compile(r"<\w+>|\w+")
MAX_PATTERN_CHARS = 200


def error_pattern(message: str) -> str:
    """The message with its volatile parts masked, lower-cased and spaced once: quoted text
    ``<str>``, URLs ``<url>``, paths ``<path>``, IP addresses ``<addr>``, hex ids ``<id>``,
    numbers ``<n>``. ``"Timeout after 30s to 10.0.0.1:443"`` -> ``"timeout after <n>s to
    <addr>"``."""
    if not isinstance(message, str) or not message.strip():
        raise InputError("an error message must be non-empty text")
    text = _QUOTED.sub("<str>", message)
    text = _URL.sub("<url>", text)
    text = _PATH.sub("<path>", text)
    text = _ADDRESS.sub("<addr>", text)
    text = _HEX.sub("<id>", text)
    text = _NUMBER.sub("<n>", text)
    return _SPACES.sub(" ", text).strip().lower()[:MAX_PATTERN_CHARS]


def _words(pattern: str) -> set[str]:
    return set(_WORD.findall(pattern))


def similar_patterns(pattern: str, known: Iterable[str], *, threshold: float = 0.6) -> list[str]:
    """The patterns of ``known`` (other than ``pattern`` itself) whose word sets overlap
    ``pattern``'s by Jaccard ``>= threshold``, most similar first (then alphabetical)."""
    mine = _words(pattern)
    scored = []
    for other in dict.fromkeys(known):
        if other == pattern:
            continue
        theirs = _words(other)
        union = mine | theirs
        score = len(mine & theirs) / len(union) if union else 0.0
        if score >= threshold:
            scored.append((-score, other))
    return [other for _, other in sorted(scored)]


def node_name(kind: str, name: str) -> str:
    """``tool:http_client`` from ("tool", "http_client"); a name with a prefix is kept."""
    if not isinstance(name, str) or not name.strip():
        raise InputError(f"a {kind} name must be non-empty text")
    name = _SPACES.sub(" ", name).strip()
    return name if re.match(r"^[a-z_]+:", name) else f"{kind}:{name}"


@dataclass(frozen=True, slots=True)
class FailureRecord:
    """What ``record_failure`` wrote: the error node and the errors it was linked to."""

    error: str
    tool: str
    session: str | None
    similar: tuple[str, ...]
    triples: tuple[Triple, ...]


class ErrorResolutionRecorder:
    """Record tool failures, fixes and sessions as triples; propagate confidence on success
    (module docstring). ``store`` needs ``add_triples``, ``query_triples`` and
    ``propagate_confidence`` (``Neo4jStore`` has them)."""

    def __init__(
        self,
        store: TripleStore,
        *,
        buffer: Any = None,
        propagation_rate: float = 0.3,
        similarity_threshold: float = 0.6,
        max_known_errors: int = 10_000,
    ):
        if not isinstance(store, TripleStore):
            raise ConfigurationError(
                "ErrorResolutionRecorder needs a store with add_triples(), query_triples() and "
                "propagate_confidence() (Neo4jStore)"
            )
        rate = check_number(propagation_rate, "propagation_rate", above=0.0, maximum=1.0)
        t = check_number(similarity_threshold, "similarity_threshold", above=0.0, maximum=1.0)
        if buffer is not None and not callable(getattr(buffer, "enqueue", None)):
            raise ConfigurationError("buffer must be a GraphBuffer (with enqueue and flush)")
        self.store = store
        self.buffer = buffer
        self.propagation_rate = float(rate)
        self.similarity_threshold = float(t)
        self.max_known_errors = max_known_errors

    def _write(self, triples: Sequence[Triple]) -> None:
        if self.buffer is not None:
            self.buffer.enqueue(list(triples))
        else:
            self.store.add_triples(list(triples))

    def _flush(self) -> None:
        if self.buffer is not None:
            self.buffer.flush()

    def known_errors(self) -> list[str]:
        """The error nodes recorded so far (subjects of ``caused_by`` named ``error:...``)."""
        self._flush()
        found = self.store.query_triples(predicate=CAUSED_BY, limit=self.max_known_errors)
        return sorted({t.subject for t in found if t.subject.startswith("error:")})

    def record_failure(
        self, tool: str, error: str, *, session: str | None = None, similar_to: Sequence[str] = ()
    ) -> FailureRecord:
        """A tool failed with ``error`` (its message): the error node is caused by the tool,
        happened in ``session`` (if given), and is ``similar_to`` the known errors whose
        pattern is close, plus those named in ``similar_to``."""
        tool_node = node_name("tool", tool)
        error_node = "error:" + error_pattern(error)
        session_node = node_name("session", session) if session is not None else None
        known = [name.removeprefix("error:") for name in self.known_errors()]
        similar = [
            f"error:{p}" for p in similar_patterns(error_node.removeprefix("error:"), known, threshold=self.similarity_threshold)
        ]
        similar += [node_name("error", s) for s in similar_to if node_name("error", s) not in similar]
        similar = [s for s in similar if s != error_node]
        meta_error = {"subject_type": "ERROR", "message": error[:500]}
        triples = [Triple(error_node, CAUSED_BY, tool_node, {**meta_error, "object_type": "TOOL"})]
        if session_node is not None:
            triples.append(Triple(error_node, IN_SESSION, session_node, {**meta_error, "object_type": "SESSION"}))
        triples += [Triple(error_node, SIMILAR_TO, s, {"subject_type": "ERROR", "object_type": "ERROR"}) for s in similar]
        self._write(triples)
        return FailureRecord(error_node, tool_node, session_node, tuple(similar), tuple(triples))

    def record_fix(self, error: str, fix: str, *, session: str | None = None) -> tuple[Triple, ...]:
        """``fix`` resolved ``error`` (a message, or an ``error:...`` node name); the fix was
        learned in ``session`` (if given)."""
        error_node = error if error.startswith("error:") else "error:" + error_pattern(error)
        fix_node = node_name("fix", fix)
        triples = [Triple(error_node, RESOLVED_BY, fix_node, {"subject_type": "ERROR", "object_type": "FIX"})]
        if session is not None:
            triples.append(
                Triple(fix_node, LEARNED_FROM, node_name("session", session), {"subject_type": "FIX", "object_type": "SESSION"})
            )
        self._write(triples)
        return tuple(triples)

    def record_success(self, tool: str) -> list[Any]:
        """``tool`` succeeded: propagate confidence to the fixes of errors similar to the
        ones it caused; returns the store's confidence updates."""
        self._flush()
        return self.store.propagate_confidence(node_name("tool", tool), propagation_rate=self.propagation_rate)
