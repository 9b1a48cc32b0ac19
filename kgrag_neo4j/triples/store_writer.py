"""Glue between extraction, the ``GraphBuffer`` and a store that writes triples.

``GraphBuffer(write_fn=store.add_triples)`` already works (``add_triples`` takes a list and
returns a count); ``store_write_fn`` adds a predicate registry with extra predicates, and
``extract_and_enqueue`` is the "extract, validate, hand to the async buffer" step.
Pure: the store is anything with ``add_triples``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from ..errors import InputError
from ..protocols import ChatProvider
from ..types.triples import PredicateRegistry, Triple
from .buffer import GraphBuffer
from .extract import extract_triples

__all__ = ["TripleWriter", "buffer_for_store", "extract_and_enqueue", "store_write_fn"]


@runtime_checkable
class TripleWriter(Protocol):
    """A store that can write triples (``Neo4jStore`` is one)."""

    def add_triples(self, triples: Sequence[Triple], *, registry: PredicateRegistry | None = None) -> int: ...


def store_write_fn(store: TripleWriter, *, registry: PredicateRegistry | None = None) -> Callable[[list[Triple]], int]:
    """A ``write_fn`` for ``GraphBuffer`` that writes to ``store`` with ``registry``'s
    predicates allowed (the nine defaults when None)."""
    if not isinstance(store, TripleWriter):
        raise InputError(f"{type(store).__name__} cannot write triples (no add_triples)")
    if registry is None:
        return store.add_triples
    return functools.partial(store.add_triples, registry=registry)


def buffer_for_store(store: TripleWriter, *, registry: PredicateRegistry | None = None, **buffer_options: Any) -> GraphBuffer:
    """A (not yet started) ``GraphBuffer`` writing to ``store``; options as ``GraphBuffer``'s."""
    return GraphBuffer(store_write_fn(store, registry=registry), **buffer_options)


def extract_and_enqueue(
    text: str,
    chat: ChatProvider,
    buffer: GraphBuffer,
    registry: PredicateRegistry,
    *,
    metadata: Mapping[str, str] | None = None,
    chunk_id: str | None = None,
    block: bool = False,
    timeout: float | None = None,
) -> int:
    """Extract the triples in ``text`` with ``chat``, drop the invalid ones (see
    ``extract_triples``) and enqueue the rest; return how many were enqueued.

    ``chunk_id`` (the chunk the text is) is recorded as the ``chunk_id`` metadata, which makes
    the store link that chunk to both ends of each triple. ``block``/``timeout`` are passed
    to ``GraphBuffer.enqueue`` (``BufferFullError`` when there is no room). The buffer's
    write function must accept ``registry``'s predicates (``store_write_fn(store,
    registry=registry)``), or triples with extra predicates will fail there.
    """
    meta = dict(metadata or {})
    if chunk_id is not None:
        if not isinstance(chunk_id, str) or not chunk_id:
            raise InputError("chunk_id must be a non-empty string")
        meta["chunk_id"] = chunk_id
    triples = extract_triples(text, chat, registry, metadata=meta or None)
    if not triples:
        return 0
    return buffer.enqueue(triples, block=block, timeout=timeout)
