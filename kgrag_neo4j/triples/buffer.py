"""``GraphBuffer``: batched, background writes of triples (an async graph buffer).

Producers ``enqueue`` triples and go on; one background thread hands them to ``write_fn`` in
batches of ``batch_size`` (64), or sooner when the oldest waiting triple has waited
``flush_interval`` seconds (2 s). Lifecycle: ``start`` / ``enqueue`` / ``flush`` / ``stop``, or
a ``with`` block.

Guarantees:

- nothing is dropped silently: a batch whose write fails is retried ``retries`` times (after
  ``retry_backoff * 2**attempt`` seconds), then passed to ``on_error(exc, triples)``, logged,
  and kept in ``failed`` (``take_failed()`` hands them back, e.g. to enqueue again). An
  ``InputError`` from ``write_fn`` is not retried: the same data would fail again;
- the queue is bounded (``max_queue``): ``enqueue`` never waits unless asked to. When the
  triples do not fit it raises ``BufferFullError`` at once, or, with ``block=True``, waits up to
  ``timeout`` seconds for room and then raises it. A list is enqueued whole or not at all;
- ``stop`` writes everything still queued and joins the thread; after it, ``enqueue`` raises
  ``BufferClosedError``. Without ``start``, ``flush`` and ``stop`` write in the caller's thread;
- batches are written one at a time, in enqueue order.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ..errors import ConfigurationError, InputError, KgragError
from ..types.triples import Triple
from ..validation import check_int

__all__ = ["BufferClosedError", "BufferFullError", "BufferStats", "GraphBuffer", "THREAD_NAME"]

THREAD_NAME = "kgrag-graph-buffer"
_MAX_BACKOFF = 30.0


class BufferFullError(KgragError):
    """The buffer's queue has no room for the triples (``max_queue`` reached); nothing of
    them was enqueued. Retry later, enqueue with ``block=True``, or raise ``max_queue``."""

    retryable = True


class BufferClosedError(KgragError):
    """The buffer was stopped; it accepts no more triples and cannot be restarted."""


@dataclass(frozen=True, slots=True)
class BufferStats:
    """Counters since creation. ``flushes`` counts batches handed to ``write_fn`` (each once,
    however many retries it took); ``retries`` counts the extra attempts."""

    enqueued: int
    written: int
    failed: int
    flushes: int
    retries: int
    pending: int


class GraphBuffer:
    """Batch triples in memory and write them from one background thread (module docstring)."""

    def __init__(
        self,
        write_fn: Callable[[list[Triple]], object],
        *,
        batch_size: int = 64,
        flush_interval: float = 2.0,
        max_queue: int = 10000,
        retries: int = 3,
        retry_backoff: float = 0.5,
        on_error: Callable[[BaseException, list[Triple]], object] | None = None,
        logger: logging.Logger | None = None,
    ) -> None:
        if not callable(write_fn):
            raise ConfigurationError("GraphBuffer needs a callable write_fn(triples)")
        for label, value, minimum in (("batch_size", batch_size, 1), ("max_queue", max_queue, 1), ("retries", retries, 0)):
            check_int(value, label, minimum=minimum)
        if not isinstance(flush_interval, (int, float)) or flush_interval <= 0:
            raise ConfigurationError(f"flush_interval must be > 0 seconds, got {flush_interval!r}")
        if not isinstance(retry_backoff, (int, float)) or retry_backoff < 0:
            raise ConfigurationError(f"retry_backoff must be >= 0 seconds, got {retry_backoff!r}")
        if max_queue < batch_size:
            raise ConfigurationError(f"max_queue ({max_queue}) must be at least batch_size ({batch_size})")
        if on_error is not None and not callable(on_error):
            raise ConfigurationError("on_error must be callable(exc, triples)")
        self.write_fn = write_fn
        self.batch_size = batch_size
        self.flush_interval = float(flush_interval)
        self.max_queue = max_queue
        self.retries = retries
        self.retry_backoff = float(retry_backoff)
        self.on_error = on_error
        self.logger = logger or logging.getLogger(__name__)

        self._cond = threading.Condition()
        # Held by whoever takes and writes a batch (the thread, or a caller without one), so
        # batches leave in order and are written one at a time.
        self._write_lock = threading.Lock()
        self._items: deque[tuple[Triple, float]] = deque()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._enqueued = 0  # sequence numbers: accepted, taken for writing, finished
        self._taken = 0
        self._done = 0
        self._flush_target = 0
        self._written = 0
        self._failed_count = 0
        self._flushes = 0
        self._retries = 0
        self._failed: list[Triple] = []

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> GraphBuffer:
        """Start the background thread (idempotent while running)."""
        with self._cond:
            if self._closed:
                raise BufferClosedError("this GraphBuffer was stopped and cannot be restarted")
            if self._thread is not None and self._thread.is_alive():
                return self
            # Not a daemon: the interpreter waits for it, so queued triples are not lost at exit
            # as long as stop() (or the with block) is reached.
            self._thread = threading.Thread(target=self._run, name=THREAD_NAME, daemon=False)
            self._thread.start()
        return self

    def stop(self, timeout: float | None = None) -> bool:
        """Write what is left, end the thread and close the buffer. False if the thread was
        still writing when ``timeout`` ran out (it goes on in the background)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None and thread.is_alive():
            thread.join(timeout)
            if thread.is_alive():
                self.logger.warning("graph buffer: still writing after %.1fs at stop", timeout or 0.0)
                return False
            return True
        self._drain_all()
        return True

    def __enter__(self) -> GraphBuffer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # -- producers --------------------------------------------------------------------------

    def enqueue(self, triples: Triple | Iterable[Triple], *, block: bool = False, timeout: float | None = None) -> int:
        """Queue one triple or a list of them (all or nothing); return how many were queued.

        Raises ``BufferFullError`` when they do not fit (at once, or after ``timeout`` seconds
        with ``block=True``; ``timeout=None`` then waits as long as it takes),
        ``BufferClosedError`` after ``stop``, ``InputError`` for a non-``Triple`` item or a list
        larger than ``max_queue``.
        """
        batch = [triples] if isinstance(triples, Triple) else list(triples)
        for t in batch:
            if not isinstance(t, Triple):
                raise InputError(f"GraphBuffer.enqueue takes Triple values, got {type(t).__name__}")
        if len(batch) > self.max_queue:
            raise InputError(f"{len(batch)} triples can never fit a queue of {self.max_queue}; split them")
        if not batch:
            return 0
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while True:
                if self._closed:
                    raise BufferClosedError("this GraphBuffer was stopped; it accepts no more triples")
                if len(self._items) + len(batch) <= self.max_queue:
                    break
                remaining = None if deadline is None else deadline - time.monotonic()
                if not block or (remaining is not None and remaining <= 0):
                    raise BufferFullError(
                        f"graph buffer full: {len(self._items)} of {self.max_queue} triples queued, no room for {len(batch)} more"
                    )
                self._cond.wait(remaining)
            now = time.monotonic()
            self._items.extend((t, now) for t in batch)
            self._enqueued += len(batch)
            self._cond.notify_all()
        return len(batch)

    def flush(self, timeout: float | None = None) -> bool:
        """Write every triple enqueued before this call (written or failed) and return True;
        False if ``timeout`` seconds passed first."""
        if not self.running:
            self._drain_all()
            return True
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            target = self._enqueued
            self._flush_target = max(self._flush_target, target)
            self._cond.notify_all()
            while self._done < target:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                if not self.running:
                    break  # the thread ended (stop); finish in this thread below
                # Bounded wait: re-check that the thread is alive now and then.
                self._cond.wait(0.1 if remaining is None else min(remaining, 0.1))
            else:
                return True
        self._drain_all()
        return True

    # -- results ----------------------------------------------------------------------------

    @property
    def failed(self) -> list[Triple]:
        """Triples whose batch failed after the retries (a copy)."""
        with self._cond:
            return list(self._failed)

    def take_failed(self) -> list[Triple]:
        """Return the failed triples and forget them (to enqueue them again, say)."""
        with self._cond:
            out, self._failed = self._failed, []
            return out

    @property
    def pending(self) -> int:
        with self._cond:
            return len(self._items)

    @property
    def stats(self) -> BufferStats:
        with self._cond:
            return BufferStats(
                enqueued=self._enqueued,
                written=self._written,
                failed=self._failed_count,
                flushes=self._flushes,
                retries=self._retries,
                pending=len(self._items),
            )

    # -- the consumer -----------------------------------------------------------------------

    def _ready(self) -> bool:
        if not self._items:
            return False
        return (
            len(self._items) >= self.batch_size
            or self._closed
            or self._flush_target > self._taken
            or time.monotonic() - self._items[0][1] >= self.flush_interval
        )

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._ready():
                    if self._closed and not self._items:
                        return
                    wait = None
                    if self._items:
                        wait = max(0.0, self._items[0][1] + self.flush_interval - time.monotonic())
                    self._cond.wait(wait)
            try:
                self._write_one_batch()
            except Exception:  # noqa: BLE001 - the thread must outlive a bug in a callback
                self.logger.exception("graph buffer: unexpected error while writing a batch")

    def _drain_all(self) -> None:
        while self.pending:
            self._write_one_batch()

    def _write_one_batch(self) -> None:
        with self._write_lock:
            with self._cond:
                n = min(self.batch_size, len(self._items))
                batch = [self._items.popleft()[0] for _ in range(n)]
                self._taken += n
                self._cond.notify_all()  # room for blocked producers
            if not batch:
                return
            try:
                self._write_with_retries(batch)
            finally:
                with self._cond:
                    self._done += n
                    self._cond.notify_all()

    def _write_with_retries(self, batch: Sequence[Triple]) -> None:
        with self._cond:
            self._flushes += 1
        attempt = 0
        while True:
            try:
                self.write_fn(list(batch))
            except Exception as exc:  # noqa: BLE001 - write_fn is the caller's code
                if attempt < self.retries and not isinstance(exc, InputError):
                    delay = min(_MAX_BACKOFF, self.retry_backoff * 2**attempt)
                    self.logger.warning(
                        "graph buffer: writing %d triples failed (%s); retry %d of %d in %.2fs",
                        len(batch),
                        exc,
                        attempt + 1,
                        self.retries,
                        delay,
                    )
                    attempt += 1
                    with self._cond:
                        self._retries += 1
                    time.sleep(delay)
                    continue
                self._report_failure(exc, list(batch), attempt + 1)
                return
            with self._cond:
                self._written += len(batch)
            return

    def _report_failure(self, exc: BaseException, batch: list[Triple], attempts: int) -> None:
        with self._cond:
            self._failed.extend(batch)
            self._failed_count += len(batch)
        self.logger.error(
            "graph buffer: %d triples not written after %d attempt(s): %s; kept in .failed",
            len(batch),
            attempts,
            exc,
        )
        if self.on_error is not None:
            try:
                self.on_error(exc, batch)
            except Exception:  # noqa: BLE001 - a failing handler must not lose the batch
                self.logger.exception("graph buffer: on_error raised")
