"""The bookkeeping of a many-file ingest: one row per file, counts by outcome, and when to stop.

A bad file fails alone and the run goes on. An error that every later file would meet too (the
database unreachable after the driver's retries, credentials refused, no such database) stops
the run at once: waiting out the retry window once per remaining file would turn an outage
into an hour of identical failures. The files not attempted are listed, so a re-run knows
what is left (re-ingesting the others is a no-op).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Iterable

from ..errors import AuthenticationFailed, ConnectionFailed, DatabaseNotFound
from ..types import IngestResult
from .files import SkippedPath

__all__ = ["IngestTally", "RUN_ENDING_ERRORS", "ends_run"]

#: errors after which no later file can succeed: the run stops at the first one
RUN_ENDING_ERRORS: tuple[type[BaseException], ...] = (ConnectionFailed, AuthenticationFailed, DatabaseNotFound)

STATUSES = ("new", "unchanged", "replaced", "failed", "skipped", "not_attempted")


def ends_run(exc: BaseException) -> bool:
    """Whether ``exc`` (raised for one file) stops the whole run."""
    return isinstance(exc, RUN_ENDING_ERRORS)


@dataclass
class IngestTally:
    """Rows and counts of one run; ``stopped`` holds the error that ended it early."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STATUSES, 0))
    stopped: str | None = None

    def _row(self, path: Any, status: str, **extra: Any) -> dict[str, Any]:
        self.counts[status] += 1
        row = {"path": os.fsdecode(path), "status": status, **extra}
        self.rows.append(row)
        return row

    def record(self, path: Any, result: IngestResult) -> dict[str, Any]:
        return self._row(
            path, result.status, document_id=result.document_id, chunks=result.chunk_count,
            edges=result.edge_count, skipped=result.skipped,
        )

    def fail(self, path: Any, exc: BaseException) -> bool:
        """Record a failed file; True when the run must stop (see ``ends_run``)."""
        self._row(path, "failed", error=f"{type(exc).__name__}: {exc}")
        if ends_run(exc):
            self.stopped = f"{type(exc).__name__}: {exc}"
            return True
        return False

    def stop(self, exc: BaseException, unwritten: Iterable[Any]) -> None:
        """The run ended at ``exc`` (see ``ends_run``); ``unwritten`` were not written."""
        self.stopped = f"{type(exc).__name__}: {exc}"
        self.not_attempted(unwritten)

    def skip(self, skipped: SkippedPath) -> dict[str, Any]:
        """A path the selection passed over: a failure when it was named, else skipped."""
        return self._row(skipped.path, "failed" if skipped.named else "skipped", error=skipped.reason)

    def not_attempted(self, paths: Iterable[Any]) -> None:
        for path in paths:
            self._row(path, "not_attempted")

    @property
    def failed(self) -> bool:
        return bool(self.counts["failed"] or self.counts["not_attempted"] or self.stopped)

    def summary(self, **extra: Any) -> dict[str, Any]:
        written = [r for r in self.rows if r["status"] in ("new", "replaced")]
        return {
            "files": len(self.rows),
            **self.counts,
            "chunks": sum(r.get("chunks", 0) for r in written),
            "edges": sum(r.get("edges", 0) for r in self.rows),
            "stopped": self.stopped,
            **extra,
        }
