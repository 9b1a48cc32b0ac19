"""The bookkeeping of a many-file ingest: one row per file, counts by outcome, and when to stop.

A bad file fails alone and the run goes on. An error that every later file would meet too (the
database unreachable after the driver's retries, credentials refused, no such database) stops
the run at once: waiting out the retry window once per remaining file would turn an outage
into an hour of identical failures. The files not attempted are listed, so a re-run knows
what is left (re-ingesting the others is a no-op).

:func:`ingest_run` (``Ingestor.ingest_run``, what ``kgrag ingest`` calls) is the whole run:
files, folders and globs selected, what the selection skipped recorded, the files ingested
by ``Ingestor.ingest_paths`` (many documents per transaction), the run stopped at an error
that ends it; an :class:`IngestObserver` hears of each step as it happens (progress).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import AuthenticationFailed, ConnectionFailed, DatabaseNotFound, InputError, KgragError
from ..types import IngestResult
from .files import SkippedPath, select_files
from .outcomes import FileIngestor, FileResult

__all__ = ["IngestObserver", "IngestTally", "RUN_ENDING_ERRORS", "ends_run", "ingest_run"]

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
            path,
            result.status,
            document_id=result.document_id,
            chunks=result.chunk_count,
            edges=result.edge_count,
            skipped=result.skipped,
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


class IngestObserver:
    """What :func:`ingest_run` reports as it goes, in the calling thread; each method does
    nothing here: override the ones wanted."""

    def skipped(self, skipped: SkippedPath) -> None:
        """A path the selection passed over (``skipped.named``: given by the caller, a failure)."""

    def started(self, files: int) -> None:
        """The selection is done: ``files`` files are to be ingested."""

    def finished(self, outcome: FileResult) -> None:
        """One file's outcome (its result, or the error that refused it)."""

    def stopped(self, exc: BaseException, unwritten: Sequence[str]) -> None:
        """The run ended early at ``exc`` (see ``ends_run``); ``unwritten`` were not written."""


def ingest_run(
    ingestor: FileIngestor,
    paths: Iterable[str | os.PathLike[str]],
    *,
    content_type: str | None = None,
    source: str | None = None,
    follow_symlinks: bool = False,
    observer: IngestObserver | None = None,
    roots: Iterable[str] = (),
) -> IngestTally:
    """Ingest files, folders (recursive) and globs; returns the run's rows and counts.

    Only regular files are read: FIFOs, devices and symlinks leading out of a folder are
    recorded as skipped (``follow_symlinks`` follows the latter); a path that matches nothing
    is an ``InputError``. ``source`` names the document of a run of exactly one file (default:
    the file's resolved path). A failing file is recorded and the others go on; an error that
    ends the run (the database gone) stops it, and the files not written are recorded as
    not attempted. ``roots``: only files resolving inside these folders are read (the MCP
    server's ``--allow-path``), whatever a glob or a symlink leads to."""
    selection = select_files(
        [os.fspath(p) for p in paths], extensions=ingestor.extractors.extensions, follow_symlinks=follow_symlinks, roots=roots
    )
    files: list[str] = list(selection.files)  # ListedFile: what the read checks travels with each
    if source is not None and len(files) != 1:
        raise InputError(f"source names one document; the paths give {len(files)} files")
    watch = observer or IngestObserver()
    tally = IngestTally()
    for skipped in selection.skipped:
        tally.skip(skipped)
        watch.skipped(skipped)
    watch.started(len(files))
    reported: set[str] = set()

    def report(outcome: FileResult) -> None:
        reported.add(outcome.path)
        if outcome.exception is not None:  # FileResult.failed sets it with error
            tally.fail(outcome.path, outcome.exception)
        else:
            assert outcome.result is not None, "a FileResult holds its result or its error"
            tally.record(outcome.path, outcome.result)
        watch.finished(outcome)

    try:
        if source is not None:
            report(_one_file(ingestor, files[0], content_type=content_type, source=source))
        else:
            ingestor.ingest_paths(files, content_type=content_type, on_result=report)
    except RUN_ENDING_ERRORS as exc:
        # the database is gone (or refuses us): every later write would wait out the retries
        # and fail the same way, so the run stops here
        left = [f for f in files if f not in reported]
        tally.stop(exc, left)
        watch.stopped(exc, left)
    return tally


def _one_file(ingestor: FileIngestor, path: str, *, content_type: str | None, source: str) -> FileResult:
    """``ingest_file`` (a named ``source``) as ``ingest_paths`` reports a file; an error that
    ends the run is raised."""
    try:
        return FileResult(path, result=ingestor.ingest_file(path, content_type=content_type, source=source))
    except KgragError as exc:
        if ends_run(exc):
            raise
        return FileResult.failed(path, exc)
