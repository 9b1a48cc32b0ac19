"""The entity graph's writes, run in the background while the next batch is computed."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

__all__ = ["BackgroundWrites"]


class BackgroundWrites:
    """The build's writes, run one at a time and in order by one background thread while the
    client computes the next batch: the server writes on one core while the client links on
    the other, so a stage takes about the longer of the two, not their sum. At most one
    write waits behind the one running (memory holds two batches' parameters at most); an
    error of a write is raised by the next ``submit`` or ``drain``."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kgrag-entity-writes")
        self._queued: deque[Future[Any]] = deque()

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        future = self._pool.submit(fn, *args)
        self._queued.append(future)
        while len(self._queued) > 2:
            self._queued.popleft().result()
        return future

    def drain(self) -> None:
        while self._queued:
            self._queued.popleft().result()

    def close(self) -> None:
        """Wait for the writes still queued and end the thread. Their errors are not raised
        here: a run that ends normally has drained them already, and one ending on an error
        must report that one."""
        self._queued.clear()
        self._pool.shutdown(wait=True)
