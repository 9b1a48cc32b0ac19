"""The one mechanism for sync and async twins (``kgrag_neo4j.steps``), without a database: a
body written once runs with plain calls and in an event loop; in a loop a call awaits the
async twin its method declares, a class that claims twins refuses a method without one, and
anything that declared no twin runs in a worker thread."""

from __future__ import annotations

import asyncio
import threading

import pytest

from kgrag_neo4j.steps import Call, Gather, Pause, Steps, arun_steps, async_twin_of, declare_twin, run_steps, twin_methods


class Source:
    """A store-like object: ``count`` written once as steps, so ``count``/``acount`` are twins."""

    def __init__(self) -> None:
        self.async_calls = 0
        self.threads: list[int] = []

    def _count(self, n: int, *, fail: bool = False) -> Steps[int]:
        """Counts to n."""
        yield from Pause(0)
        if fail:
            raise ValueError("asked to fail")
        return n

    count, acount = twin_methods(_count)

    async def _alen(self, text: str) -> int:
        self.async_calls += 1
        return len(text)

    @declare_twin(_alen)
    def length(self, text: str) -> int:
        return len(text)

    def blocking(self, x: int) -> int:
        self.threads.append(threading.get_ident())
        return x * 2


class Claiming(Source):
    async_twins = True


def body(src: Source) -> Steps[tuple[int, int, int]]:
    a = yield from Call.of(src.count, 3)
    b = yield from Call.of(src.length, "abcd")
    try:
        yield from Call.of(src.count, 1, fail=True)
    except ValueError:
        b += 100  # the exception came back in at the yield
    c = yield from Call.of(src.blocking, 5)
    return a, b, c


def test_one_body_two_drivers_same_result():
    src = Source()
    assert run_steps(body(src)) == (3, 104, 10)
    assert src.async_calls == 0 and src.threads == [threading.get_ident()]
    assert asyncio.run(arun_steps(body(src))) == (3, 104, 10)
    assert src.async_calls == 1, "the declared twin of length was not awaited"
    assert src.threads[-1] != threading.get_ident(), "a method without a twin must leave the event loop's thread"


def test_twin_methods_declare_the_pair_and_keep_the_signature():
    import inspect

    assert async_twin_of(Source.count) is Source.acount
    assert async_twin_of(Source.length) is Source._alen
    assert async_twin_of(Source.blocking) is None
    assert inspect.signature(Source.count).parameters == inspect.signature(Source.acount).parameters
    assert Source.count.__doc__ == "Counts to n." and Source.acount.__name__ == "acount"
    assert asyncio.run(Source().acount(7)) == 7


def test_a_class_that_claims_twins_refuses_a_method_without_one():
    src = Claiming()
    assert run_steps(body(src)) == (3, 104, 10)  # plain calls need no twin
    with pytest.raises(TypeError, match="no declared async twin"):
        asyncio.run(arun_steps(body(src)))
    assert src.threads == [threading.get_ident()], "the refused call must not have run in a thread"


def _gather(src: Source) -> Steps[tuple[int | BaseException, int | BaseException]]:
    return (yield from Gather.of(Call.of(src.count, 1, fail=True), Call.of(src.length, "xyz")))


def test_gather_puts_each_exception_in_its_place():
    for got in (run_steps(_gather(Source())), asyncio.run(arun_steps(_gather(Source())))):
        first, second = got
        assert isinstance(first, ValueError) and second == 3


def test_sync_gathers_share_one_bounded_pool():
    """No pool per query: many gathers run their calls on the same few worker threads, and a
    gather inside a gathered call runs in place (the bounded pool never waits on itself)."""
    from kgrag_neo4j import steps

    src = Source()

    def nested(x: int) -> int:
        return sum(r for r in run_steps(_two(src, x)) if isinstance(r, int))

    def _two(s: Source, x: int) -> Steps[tuple[int | BaseException, int | BaseException]]:
        return (yield from Gather.of(Call.of(s.blocking, x), Call.of(s.blocking, x + 1)))

    for i in range(50):
        got = run_steps(_two(src, i))
        assert got == (2 * i, 2 * i + 2)
    assert len(set(src.threads) - {threading.get_ident()}) <= steps.GATHER_THREADS
    outer = run_steps(Gather.of(Call.of(nested, 1), Call.of(nested, 2)).__iter__())
    assert outer == (2 + 4, 4 + 6)


def test_the_gather_pool_leaves_no_thread_behind():
    """Its workers end once idle: a quiet process holds no thread of the library."""
    import time

    from kgrag_neo4j import steps

    src = Source()
    for i in range(5):
        assert run_steps(Gather.of(Call.of(src.blocking, i), Call.of(src.blocking, i)).__iter__()) == (2 * i, 2 * i)

    def workers() -> list[str]:
        return [t.name for t in threading.enumerate() if t.name.startswith("kgrag-gather")]

    assert workers(), "the second call of each gather ran on a pool worker"
    deadline = time.monotonic() + steps.GATHER_IDLE_SECONDS + 5
    while workers() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert workers() == []
    assert run_steps(Gather.of(Call.of(src.blocking, 1), Call.of(src.blocking, 2)).__iter__()) == (2, 4)


def test_every_async_read_of_the_neo4j_store_is_a_declared_twin():
    """``Neo4jStore`` claims twins: each ``a<name>`` coroutine is the twin ``<name>`` declares
    (so ``aretrieve`` never reaches one by its name, nor falls back to a thread)."""
    import inspect

    from kgrag_neo4j.store.neo4j_store import Neo4jStore

    assert Neo4jStore.async_twins
    pairs = {
        name: getattr(Neo4jStore, name[1:])
        for name in dir(Neo4jStore)
        if name.startswith("a")
        and inspect.iscoroutinefunction(getattr(Neo4jStore, name))
        and callable(getattr(Neo4jStore, name[1:], None))
        and name != "aclose"  # not a twin: it closes this event loop's async driver only
    }
    assert {
        "asearch_chunks",
        "asearch_chunks_keyword",
        "aget_chunks_by_ids",
        "acheck_embedder",
        "agraph_retrieve",
        "aexpand_triples",
        "alocal_context",
        "appr_neighbourhood",
    } <= set(pairs)
    assert {name: async_twin_of(sync) for name, sync in pairs.items()} == {name: getattr(Neo4jStore, name) for name in pairs}


def test_every_shipped_retriever_declares_its_async_twin():
    """``aretrieve`` (and ``acontext``, ``asearch``) are the declared twins of the sync methods,
    written once as a body of steps."""
    from kgrag_neo4j.retrieval.entity import EntityGraphRetriever
    from kgrag_neo4j.retrieval.local_search import LocalSearchRetriever
    from kgrag_neo4j.retrieval.ppr import PPRRetriever
    from kgrag_neo4j.retrieval.retrievers import GraphRetriever, HybridRetriever, VectorRetriever
    from kgrag_neo4j.retrieval.triples import TripleGraphRetriever

    for cls in (
        VectorRetriever,
        HybridRetriever,
        GraphRetriever,
        PPRRetriever,
        EntityGraphRetriever,
        LocalSearchRetriever,
        TripleGraphRetriever,
    ):
        assert async_twin_of(cls.retrieve) is cls.aretrieve, cls.__name__
    assert async_twin_of(LocalSearchRetriever.context) is LocalSearchRetriever.acontext
    assert async_twin_of(TripleGraphRetriever.search) is TripleGraphRetriever.asearch
