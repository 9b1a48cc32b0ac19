"""One retrieval body for ``retrieve`` and ``aretrieve``.

A retriever writes its orchestration once, as a generator that yields the calls it needs
(``Call`` of a store or provider method, ``Gather`` of several at once) and receives their
results; an exception a call raised is thrown back in at the ``yield``, so ``try/except``
around it works as around a direct call. ``run_steps`` drives such a body with plain calls;
``arun_steps`` drives it in an event loop, awaiting the async twin of each method when the
object has one (``store.search_chunks`` -> ``await store.asearch_chunks``: the Neo4j store's
reads on the driver's ``AsyncDriver``) and running any other call in a worker thread (an
embedding over HTTP, a custom store's method, the per-hop fallback).

The scoring stays in ``scoring.py`` and the retrievers; nothing here knows a formula.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Generator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

__all__ = ["Call", "Gather", "Steps", "arun_steps", "retrieve_async", "run_steps"]

T = TypeVar("T")


@dataclass(frozen=True)
class Call:
    """``fn(*args, **kwargs)``; in an event loop, ``await owner.a<name>(...)`` when the
    bound method's owner has that coroutine method."""

    fn: Callable[..., Any]
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Call:
        return cls(fn, args, kwargs)

    def twin(self) -> Callable[..., Any] | None:
        owner = getattr(self.fn, "__self__", None)
        name = getattr(self.fn, "__name__", None)
        if owner is None or not name:
            return None
        twin = getattr(owner, "a" + name, None)
        return twin if twin is not None and inspect.iscoroutinefunction(twin) else None


@dataclass(frozen=True)
class Gather:
    """Several calls at once; the result is their results in order, an exception in the place
    of a call that raised (so one failure can be handled without losing the others)."""

    calls: tuple[Call, ...]


#: a retrieval body: yields Call / Gather, receives results, returns its value
Steps = Generator["Call | Gather", Any, T]


def _call(step: Call) -> Any:
    return step.fn(*step.args, **step.kwargs)


def _sync(step: Call | Gather) -> Any:
    if isinstance(step, Call):
        return _call(step)
    with ThreadPoolExecutor(max_workers=len(step.calls), thread_name_prefix="kgrag-gather") as pool:
        futures = [pool.submit(_call, c) for c in step.calls]
        return [f.exception() or f.result() for f in futures]


async def _async_call(step: Call) -> Any:
    twin = step.twin()
    if twin is not None:
        return await twin(*step.args, **step.kwargs)
    return await asyncio.to_thread(_call, step)


async def _async(step: Call | Gather) -> Any:
    if isinstance(step, Call):
        return await _async_call(step)
    return list(await asyncio.gather(*(_async_call(c) for c in step.calls), return_exceptions=True))


def run_steps(body: Steps[T]) -> T:
    value: Any = None
    error: BaseException | None = None
    while True:
        try:
            step = body.send(value) if error is None else body.throw(error)
        except StopIteration as stop:
            return stop.value
        try:
            value, error = _sync(step), None
        except Exception as exc:
            value, error = None, exc


async def arun_steps(body: Steps[T]) -> T:
    value: Any = None
    error: BaseException | None = None
    while True:
        try:
            step = body.send(value) if error is None else body.throw(error)
        except StopIteration as stop:
            return stop.value
        try:
            value, error = await _async(step), None
        except Exception as exc:
            value, error = None, exc


async def retrieve_async(retriever: Any, query: str, top_k: int) -> Any:
    """``await retriever.aretrieve(query, top_k)``; a retriever of the caller's own without
    ``aretrieve`` runs in a worker thread so the event loop is not blocked."""
    native = getattr(retriever, "aretrieve", None)
    if native is not None and inspect.iscoroutinefunction(native):
        return await native(query, top_k)
    return await asyncio.to_thread(retriever.retrieve, query, top_k)
