"""Triples from text with a chat model: prompt, parse, validate.

The caller decides where they go, typically ``GraphBuffer.enqueue(extract_triples(...))``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from ..errors import InputError
from ..protocols import ChatProvider
from ..types.triples import PREDICATE_DESCRIPTIONS, PredicateRegistry, Triple
from .parsing import parse_triples

__all__ = ["extract_triples", "triple_messages"]

_SYSTEM_PROMPT = """\
You extract knowledge-graph triples from text.
Answer with one triple per line, exactly in the form Subject|Predicate|Object, and nothing else.
Subjects and objects are short names of the things the text is about (use the same spelling
each time). The predicate must be one of:
{predicates}
If the text states no such relation, answer with nothing."""


def triple_messages(text: str, registry: PredicateRegistry) -> list[dict[str, str]]:
    """The prompt ``extract_triples`` sends (public so it can be logged or reviewed)."""
    lines = [f"- {name}: {PREDICATE_DESCRIPTIONS.get(name, 'declared by the application')}" for name in registry.names]
    return [
        {"role": "system", "content": _SYSTEM_PROMPT.format(predicates="\n".join(lines))},
        {"role": "user", "content": text},
    ]


def extract_triples(
    text: str,
    chat: ChatProvider,
    registry: PredicateRegistry,
    *,
    metadata: Mapping[str, str] | None = None,
    logger: logging.Logger | None = None,
) -> list[Triple]:
    """Ask ``chat`` for the triples in ``text``; return the valid ones (unknown predicates,
    malformed lines and duplicates dropped; the count is logged at INFO). ``metadata`` is
    added to every triple (e.g. ``{"session": "abc"}``). Provider errors propagate.
    """
    if not isinstance(text, str):
        raise InputError(f"extract_triples needs text, got {type(text).__name__}")
    if not text.strip():
        return []
    log = logger or logging.getLogger(__name__)
    reply = chat.chat(triple_messages(text, registry))
    parsed = parse_triples(reply, registry)
    if parsed.dropped:
        log.info("triple extraction dropped %d invalid line(s): %s", parsed.dropped, "; ".join(parsed.problems[:5]))
    if not metadata:
        return list(parsed.triples)
    return [Triple(t.subject, t.predicate, t.object, {**dict(t.metadata), **dict(metadata)}) for t in parsed.triples]
