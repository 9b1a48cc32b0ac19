"""The async twin of the read runner: registry read statements on the driver's ``AsyncDriver``.

Only reads are async (what an async web app does per request); writes stay on the sync
runner. A store read is one body of steps (``kgrag_neo4j.steps``) whose ``Read`` steps run on
the sync runner or on this one, so every store read method has one body for both
(``Neo4jStore.search_chunks`` / ``asearch_chunks``, made by ``twin_methods``). Errors map exactly as in
the sync runner, and a read that loses a race with a concurrent delete is retried the same way.

An ``AsyncDriver`` belongs to the event loop it is used in: ``AsyncDrivers`` opens one per loop
from the store's settings (or uses the one the caller passed) and closes them.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import neo4j
from neo4j import AsyncGraphDatabase

from ..errors import ConfigurationError
from ..settings import Neo4jSettings
from ..steps import Await, Step, arun_steps
from .runner import (
    CypherRunner,
    Rows,
    connect_driver,
)

__all__ = ["AsyncCypherRunner", "AsyncDrivers", "Read", "Readers", "connect_async_driver"]


def connect_async_driver(settings: Neo4jSettings, **options: Any) -> neo4j.AsyncDriver:
    """An async driver for ``settings`` with the sync driver's options and bounded waits."""
    return connect_driver(settings, factory=AsyncGraphDatabase.driver, **options)


class AsyncCypherRunner:
    """Runs registry read statements on an ``AsyncDriver``; shares the registry, the checks and
    the round-trip count semantics of ``CypherRunner`` (``sync``)."""

    def __init__(self, driver: neo4j.AsyncDriver, sync: CypherRunner) -> None:
        self.driver = driver
        self.sync = sync
        #: statements sent since creation (reads on this driver only)
        self.round_trips = 0

    async def read(self, name: str, /, **params: Any) -> Rows:
        """``CypherRunner.read`` on the async driver: the same body (``read_steps``), with
        async attempts."""
        started = time.perf_counter()
        rows = await arun_steps(
            self.sync.read_steps(name, params, lambda text, sent, managed: Await.of(self._attempt, text, sent, managed))
        )
        self.round_trips += 1
        if self.sync.tracer is not None:
            self.sync.tracer(name, params, time.perf_counter() - started)
        return rows

    async def _attempt(self, text: str, sent: dict[str, Any], managed: bool) -> Rows:
        async def rows_of(result: neo4j.AsyncResult) -> Rows:
            return [dict(zip(r.keys(), r.values())) async for r in result]

        if managed:
            rows: Rows = await self.driver.execute_query(
                text,
                sent,
                routing_=neo4j.RoutingControl.READ,
                database_=self.sync.database,
                bookmark_manager_=None,
                result_transformer_=rows_of,
            )
            return rows
        async with self.driver.session(database=self.sync.database, default_access_mode=neo4j.READ_ACCESS) as session:
            return await rows_of(await session.run(text, sent))


class AsyncDrivers:
    """One ``AsyncCypherRunner`` per running event loop, shared by a store and the stores
    ``with_namespace`` makes from it. Drivers it opened (from ``settings``) it closes; a
    driver the caller passed is the caller's."""

    def __init__(self, settings: Neo4jSettings | None, driver: neo4j.AsyncDriver | None, sync: CypherRunner) -> None:
        self.settings = settings
        self.given = driver
        self.sync = sync
        self._by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[AsyncCypherRunner, Any]] = (
            weakref.WeakKeyDictionary()
        )

    async def runner(self) -> AsyncCypherRunner:
        """The runner of the running event loop, opened on first use."""
        loop = asyncio.get_running_loop()
        found = self._by_loop.get(loop)
        if found is not None:
            return found[0]
        if self.given is not None:
            runner = AsyncCypherRunner(self.given, self.sync)
            self._by_loop[loop] = (runner, None)
            return runner
        if self.settings is None:
            raise ConfigurationError(
                "async reads need a store made by Neo4jStore.connect(settings), or "
                "Neo4jStore(driver, settings=...) / Neo4jStore(driver, async_driver=...)"
            )
        runner = AsyncCypherRunner(connect_async_driver(self.settings), self.sync)
        # Closed with its loop: the loop finalises the async generators it knows of when it
        # shuts down (asyncio.run does), so a script that calls asyncio.run(...aretrieve(...))
        # again and again leaves no driver open behind each loop.
        closer = _close_at_shutdown(runner.driver)
        self._by_loop[loop] = (runner, closer)
        await closer.__anext__()
        return runner

    @property
    def round_trips(self) -> int:
        return sum(runner.round_trips for runner, _ in list(self._by_loop.values()))

    async def aclose(self) -> None:
        """Close the driver this loop opened now, rather than when the loop shuts down."""
        found = self._by_loop.pop(asyncio.get_running_loop(), None)
        if found is not None and found[1] is not None:
            await found[1].aclose()

    def close(self) -> None:
        """Close the drivers of loops that stopped without shutting down (not run by
        ``asyncio.run``); a running loop's driver closes when that loop shuts down."""
        for loop, (_runner, closer) in list(self._by_loop.items()):
            if closer is None or loop.is_running() or loop.is_closed():
                continue
            loop.run_until_complete(closer.aclose())
            self._by_loop.pop(loop, None)


async def _close_at_shutdown(driver: neo4j.AsyncDriver) -> Any:
    try:
        yield
    finally:
        await driver.close()


class Readers(Protocol):
    """What a store read body reads with: the store's sync runner and its async drivers."""

    runner: CypherRunner
    aio: AsyncDrivers


@dataclass(frozen=True)
class Read(Step[Rows]):
    """One registry read statement of a store body (``rows = yield from Read(self, name,
    params)``): on the store's sync runner with plain calls, on the event loop's async runner
    in one."""

    store: Readers
    name: str
    params: Mapping[str, Any]

    def run(self) -> Rows:
        return self.store.runner.read(self.name, **self.params)

    async def arun(self) -> Rows:
        return await (await self.store.aio.runner()).read(self.name, **self.params)
