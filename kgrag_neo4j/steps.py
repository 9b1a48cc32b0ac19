"""One body, two drivers: how an operation is written once for sync and async callers.

An operation that waits on I/O (a store read, a retrieval) is written once, as a generator
that yields *steps* and receives their results with ``yield from``, typed:

    hits = yield from Call.of(store.search_chunks, embedding, 10)   # list[RetrievalResult]

``run_steps`` drives a body with plain calls; ``arun_steps`` drives it in an event loop,
awaiting each step's async side. An exception a step raised is thrown back in at its
``yield``, so ``try/except`` around it works as around a direct call. The steps:

- ``Call.of(fn, *args, **kwargs)``: ``fn(*args, **kwargs)``, its arguments checked by mypy
  against ``fn``'s signature. In an event loop the async twin *declared* for ``fn`` is awaited
  (``twin_methods`` declares it for the pair it makes, ``declare_twin`` for a hand-written
  pair). An object that claims twins (``async_twins = True``, as ``Neo4jStore``) but declares
  none for ``fn`` is a programming error, raised, never a silent thread. Anything else (an
  embedder over HTTP, a custom store, a plain function) declared no twin and runs in a worker
  thread, so the event loop is not blocked.
- ``Gather.of(a, b)``: several calls at once (with plain calls in one bounded pool the process
  shares, see ``Gather``). Each place holds its result or the exception its call raised.
- ``Pause(seconds)``: ``time.sleep`` or ``asyncio.sleep``.
- ``Await.of(afn, *args)``: a coroutine function, for a body that only an event loop drives
  (the async read runner hands its attempts to the body the sync runner shares).
- A store read (``store.aio.Read``), and any other ``Step`` subclass.

``twin_methods(body)`` makes the two methods of a body method, ``name`` and ``aname``, with
the same signature and docstring and their pairing declared.
"""

from __future__ import annotations

import asyncio
import collections
import functools
import itertools
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Generator
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload

__all__ = [
    "Await",
    "Call",
    "Gather",
    "Pause",
    "Step",
    "Steps",
    "arun_steps",
    "async_twin_of",
    "declare_twin",
    "run_steps",
    "twin_methods",
]

T = TypeVar("T")
R = TypeVar("R")
R1 = TypeVar("R1")
R2 = TypeVar("R2")
S = TypeVar("S")
P = ParamSpec("P")

#: the attribute of a sync function that names its async twin (see ``declare_twin``)
_TWIN = "__kgrag_async_twin__"


class Step(Generic[R]):
    """What a body yields: something to run with a plain call (``run``) or in an event loop
    (``arun``). ``result = yield from step`` hands it to the driver and types the result."""

    def run(self) -> R:
        raise NotImplementedError

    async def arun(self) -> R:
        raise NotImplementedError

    def __iter__(self) -> Generator[Step[Any], Any, R]:
        result: R = yield self
        return result


#: a body: yields steps, receives their results, returns its value. What a bare ``yield step``
#: receives is typed ``object``: results are taken with ``yield from step``, which types them.
Steps = Generator[Step[Any], object, T]


def declare_twin(afn: Callable[..., Coroutine[Any, Any, Any]]) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorate a sync function (or method) with its async twin (a coroutine function taking
    the same arguments, ``self`` included for a method)."""

    def mark(fn: Callable[P, R]) -> Callable[P, R]:
        setattr(fn, _TWIN, afn)
        return fn

    return mark


def async_twin_of(fn: Callable[P, R]) -> Callable[P, Coroutine[Any, Any, R]] | None:
    """The declared async twin of ``fn`` (bound to ``fn``'s object for a bound method), or None."""
    func = getattr(fn, "__func__", fn)
    twin = getattr(func, _TWIN, None)
    if twin is None:
        return None
    owner = getattr(fn, "__self__", None)
    return functools.partial(twin, owner) if owner is not None else twin


def _claims_twins(fn: Callable[..., Any]) -> bool:
    owner = getattr(fn, "__self__", None)
    return bool(getattr(type(owner), "async_twins", False)) if owner is not None else False


@dataclass(frozen=True)
class Call(Step[R]):
    """``fn(*args, **kwargs)``; in an event loop its declared async twin, else a worker thread
    (see the module's docstring)."""

    fn: Callable[..., R]
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> Call[R]:
        return Call(fn, args, dict(kwargs))

    def run(self) -> R:
        return self.fn(*self.args, **self.kwargs)

    async def arun(self) -> R:
        twin = async_twin_of(self.fn)
        if twin is not None:
            return await twin(*self.args, **self.kwargs)
        if _claims_twins(self.fn):
            raise TypeError(
                f"{getattr(self.fn, '__qualname__', self.fn)!r} has no declared async twin, but its class "
                "declares async_twins: pair it with twin_methods or declare_twin"
            )
        return await asyncio.to_thread(self.run)


@dataclass(frozen=True)
class Await(Step[R]):
    """``await afn(*args, **kwargs)``: a step only ``arun_steps`` can drive."""

    fn: Callable[..., Awaitable[R]]
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, fn: Callable[P, Awaitable[R]], *args: P.args, **kwargs: P.kwargs) -> Await[R]:
        return Await(fn, args, dict(kwargs))

    def run(self) -> R:
        raise TypeError(f"{getattr(self.fn, '__qualname__', self.fn)!r} is a coroutine function: it needs arun_steps")

    async def arun(self) -> R:
        return await self.fn(*self.args, **self.kwargs)


#: worker threads of the pool sync ``Gather``s share (the calls after each gather's first)
GATHER_THREADS = 8
#: a worker idle this long ends: a library leaves no thread running behind a quiet process
GATHER_IDLE_SECONDS = 1.0
_GATHER_PREFIX = "kgrag-gather"


class _SharedPool:
    """At most ``size`` daemon workers, started when a task finds none waiting, each ending
    after ``idle`` seconds without work. (``ThreadPoolExecutor`` keeps its threads until
    shutdown, and a pool per query starts them on every query.)"""

    def __init__(self, size: int, idle: float) -> None:
        self.size = size
        self.idle = idle
        self._cond = threading.Condition()
        self._tasks: collections.deque[tuple[Future[Any], Call[Any]]] = collections.deque()
        self._workers = 0
        self._waiting = 0
        self._names = itertools.count()

    def submit(self, call: Call[Any]) -> Future[Any]:
        future: Future[Any] = Future()
        with self._cond:
            self._tasks.append((future, call))
            if len(self._tasks) > self._waiting and self._workers < self.size:
                self._workers += 1
                name = f"{_GATHER_PREFIX}_{next(self._names)}"
                threading.Thread(target=self._work, name=name, daemon=True).start()
            self._cond.notify()
        return future

    def _work(self) -> None:
        with self._cond:
            while True:
                while not self._tasks:
                    self._waiting += 1
                    woken = self._cond.wait(timeout=self.idle)
                    self._waiting -= 1
                    if not woken and not self._tasks:
                        self._workers -= 1
                        return
                future, call = self._tasks.popleft()
                self._cond.release()
                try:
                    if future.set_running_or_notify_cancel():
                        try:
                            future.set_result(_outcome(call))
                        except BaseException as exc:  # _outcome keeps Exceptions; this is the rest
                            future.set_exception(exc)
                finally:
                    self._cond.acquire()


_pool = _SharedPool(GATHER_THREADS, GATHER_IDLE_SECONDS)


def _outcome(call: Call[Any]) -> Any:
    try:
        return call.run()
    except Exception as exc:
        return exc


@dataclass(frozen=True)
class Gather(Step[R]):
    """Several calls; the result holds each call's result, or in its place the exception it
    raised (so one failure can be handled without losing the others).

    In an event loop the calls run at once (``asyncio.gather``). With plain calls the first runs
    in the caller's thread and the others at the same time in one pool the process shares (at
    most ``GATHER_THREADS`` workers, each ending when idle; a pool per query started threads on
    every query). A gather inside a gathered call runs its calls one after another, so the
    bounded pool never waits on itself."""

    calls: tuple[Call[Any], ...]

    @overload
    @staticmethod
    def of(a: Call[R1], b: Call[R2], /) -> Gather[tuple[R1 | BaseException, R2 | BaseException]]: ...
    @overload
    @staticmethod
    def of(*calls: Call[R1]) -> Gather[tuple[R1 | BaseException, ...]]: ...
    @staticmethod
    def of(*calls: Call[Any]) -> Gather[Any]:
        return Gather(tuple(calls))

    def run(self) -> R:
        if len(self.calls) < 2 or threading.current_thread().name.startswith(_GATHER_PREFIX):
            return tuple(_outcome(c) for c in self.calls)  # type: ignore[return-value]  # R: the tuple ``of`` typed
        futures = [_pool.submit(c) for c in self.calls[1:]]
        first = _outcome(self.calls[0])
        return (first, *(f.result() for f in futures))  # type: ignore[return-value]

    async def arun(self) -> R:
        found = await asyncio.gather(*(c.arun() for c in self.calls), return_exceptions=True)
        return tuple(found)  # type: ignore[return-value]


@dataclass(frozen=True)
class Pause(Step[None]):
    """Wait ``seconds`` without blocking an event loop."""

    seconds: float

    def run(self) -> None:
        time.sleep(self.seconds)

    async def arun(self) -> None:
        await asyncio.sleep(self.seconds)


def run_steps(body: Steps[T]) -> T:
    """Drive ``body`` with plain calls."""
    value: Any = None
    error: BaseException | None = None
    while True:
        try:
            step = body.send(value) if error is None else body.throw(error)
        except StopIteration as stop:
            return stop.value
        try:
            value, error = step.run(), None
        except Exception as exc:
            value, error = None, exc


async def arun_steps(body: Steps[T]) -> T:
    """Drive ``body`` in the running event loop."""
    value: Any = None
    error: BaseException | None = None
    while True:
        try:
            step = body.send(value) if error is None else body.throw(error)
        except StopIteration as stop:
            return stop.value
        try:
            value, error = await step.arun(), None
        except Exception as exc:
            value, error = None, exc


def twin_methods(
    body: Callable[Concatenate[S, P], Steps[R]], *, name: str | None = None
) -> tuple[Callable[Concatenate[S, P], R], Callable[Concatenate[S, P], Coroutine[Any, Any, R]]]:
    """The sync and async methods of the body method ``_name``: ``name`` (``run_steps``) and
    ``aname`` (``arun_steps``), declared twins (``name=`` when the body is named otherwise).
    Both show the body's signature and docstring (``inspect.signature`` follows
    ``__wrapped__``), so options and defaults are written once."""
    public = name or body.__name__.lstrip("_")

    @functools.wraps(body)
    async def amethod(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return await arun_steps(body(self, *args, **kwargs))

    @declare_twin(amethod)
    @functools.wraps(body)
    def method(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return run_steps(body(self, *args, **kwargs))

    for fn, name in ((method, public), (amethod, "a" + public)):
        fn.__name__ = name
        fn.__qualname__ = body.__qualname__.rsplit(".", 1)[0] + "." + name
    return method, amethod
