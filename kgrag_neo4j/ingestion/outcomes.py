"""What a many-file ingest reports per file, and what the run needs of whoever ingests.

The folder pipeline (``pipeline.py``) makes the results, ``Ingestor`` returns them and the
run's bookkeeping (``batch.py``) counts them; they live here so that none of those modules
imports another's internals: ``Ingestor.ingest_run`` calls the run, the run sees the
ingestor only as a :class:`FileIngestor`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Protocol

from ..errors import KgragError
from ..types import IngestResult
from .extractors.registry import ExtractorRegistry

__all__ = ["FileIngestor", "FileResult"]


@dataclass(frozen=True, slots=True)
class FileResult:
    """What ``Ingestor.ingest_paths`` (or ``aingest_paths``) did with one file: its
    ``result``, or the error that refused it (then nothing of it was written): ``error`` as
    one line (``"InputError: ..."``), ``exception`` the error itself. From ``ingest_paths``,
    ``result.document`` is None: a run over many files would otherwise hold all their text
    until it ends (``result.document_id`` names it; ``Store.get_document`` reads it)."""

    path: str
    result: IngestResult | None = None
    error: str | None = None
    exception: KgragError | None = field(default=None, repr=False, compare=False)

    @classmethod
    def failed(cls, path: str, exc: KgragError) -> FileResult:
        return cls(path, error=f"{type(exc).__name__}: {exc}", exception=exc)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def status(self) -> str:
        """new, unchanged or replaced; failed when there is an error."""
        return self.result.status if self.result is not None else "failed"


class FileIngestor(Protocol):
    """What ``batch.ingest_run`` calls: the extensions it may read, many files at once, and
    one file under a given source name (``Ingestor`` is one)."""

    extractors: ExtractorRegistry

    def ingest_paths(
        self,
        paths: Iterable[str | os.PathLike[str]],
        *,
        content_type: str | None = None,
        on_result: Callable[[FileResult], None] | None = None,
    ) -> list[FileResult]: ...

    def ingest_file(
        self,
        path: str | os.PathLike[str],
        *,
        content_type: str | None = None,
        source: str | None = None,
    ) -> IngestResult: ...
