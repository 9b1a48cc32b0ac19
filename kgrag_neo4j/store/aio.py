"""The async twin of the read runner: registry read statements on the driver's ``AsyncDriver``.

Only reads are async (what an async web app does per request); writes stay on the sync
runner. The same ``Plan``s the sync runner drives run here, so every store read method has one
body for both (``Neo4jStore.search_chunks`` / ``asearch_chunks``). Errors map exactly as in
the sync runner, and a read that loses a race with a concurrent delete is retried the same way.

An ``AsyncDriver`` belongs to the event loop it is used in: ``AsyncDrivers`` opens one per loop
from the store's settings (or uses the one the caller passed) and closes them.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from typing import Any

import neo4j
from neo4j import AsyncGraphDatabase
from neo4j import exceptions as neo4j_exc

from ..errors import ConfigurationError
from ..settings import Neo4jSettings
from .runner import (
    ConcurrentDelete,
    CypherRunner,
    Plan,
    RaceRetry,
    Rows,
    T,
    connect_driver,
    log_safe,
    map_neo4j_errors,
    worth_a_managed_retry,
)

__all__ = ["AsyncCypherRunner", "AsyncDrivers", "connect_async_driver"]


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
        q = self.sync.read_query(name, params)
        sent = log_safe(params)
        started = time.perf_counter()

        async def rows_of(result: neo4j.AsyncResult) -> Rows:
            return [dict(zip(r.keys(), r.values())) async for r in result]

        retry = RaceRetry()
        managed = False
        with map_neo4j_errors(self.sync.where):
            while True:
                try:
                    # as the sync runner: one round trip in auto-commit, the driver's managed,
                    # retried read after a connection or transient error
                    if managed:
                        rows: Rows = await self.driver.execute_query(
                            q.text, sent, routing_=neo4j.RoutingControl.READ, database_=self.sync.database,
                            bookmark_manager_=None, result_transformer_=rows_of,
                        )
                    else:
                        async with self.driver.session(database=self.sync.database,
                                                       default_access_mode=neo4j.READ_ACCESS) as session:
                            rows = await rows_of(await session.run(q.text, sent))
                    break
                except (neo4j_exc.Neo4jError, neo4j_exc.DriverError, ConcurrentDelete) as exc:
                    if not managed and worth_a_managed_retry(exc):
                        managed = True
                        continue
                    await asyncio.sleep(retry.pause(exc))
        self.round_trips += 1
        if self.sync.tracer is not None:
            self.sync.tracer(name, params, time.perf_counter() - started)
        return rows

    async def run(self, plan: Plan[T]) -> T:
        """Drive a read ``Plan`` (see ``store.runner.run_plan``) with async reads."""
        try:
            request = next(plan)
            while True:
                request = plan.send(await self.read(request.name, **request.params))
        except StopIteration as stop:
            return stop.value


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

    async def run(self, plan: Plan[T]) -> T:
        return await (await self.runner()).run(plan)

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
