"""The batched folder pipeline (``Ingestor.ingest_paths``, what ``kgrag ingest FOLDER`` runs).

Files are read and their content hashes checked against the store a group at a time (one
read per ``GROUP_FILES`` files or ``GROUP_BYTES`` of text: unchanged files cost no chunking
and no embedding); the changed ones are chunked, embedded and written in batches of about
``WRITE_BATCH_CHUNKS`` chunks, one transaction each, ``WRITERS`` at once while the next batch
is embedded (one at a time, and half the size, when a batch's edges may point to the batch
before it). A group's last files may wait for the next group's to fill a batch.
"""

from __future__ import annotations

import dataclasses
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

from ..errors import KgragError
from .chunking import run_time
from .document import IngestDocument, chunks_of, mark_cancelled, stop_if_cancelled
from .outcomes import FileResult
from .similarity import SimilarityLinker
from .writing import DocumentWriter

__all__ = [
    "FIRST_GROUP_FILES",
    "FIRST_WRITE_BATCH_CHUNKS",
    "GROUP_BYTES",
    "GROUP_FILES",
    "WRITERS",
    "WRITE_BATCH_CHUNKS",
    "FolderPipeline",
]

#: files read and hash-checked together (one read of the store each), up to ``GROUP_BYTES``
#: characters of text
GROUP_FILES = 2_048
GROUP_BYTES = 32_000_000
#: chunks per write batch: one transaction each (``Store.store_documents`` splits further if
#: it must); a document with more chunks is a batch of its own; half of it when batches are
#: written one at a time
WRITE_BATCH_CHUNKS = 2_000
#: a run's first group and first batch are this small, and each next one twice the last (up to
#: the sizes above), so the writer gets work early instead of waiting idle while a whole first
#: batch is read, hashed, chunked and embedded
FIRST_GROUP_FILES = 128
FIRST_WRITE_BATCH_CHUNKS = 64
#: write transactions kept open at once: the database runs a transaction's statement on one
#: thread, so one writer left a core idle while the next batch was embedded
WRITERS = 2

#: reads one file into a document (or raises ``KgragError``): ``load(path, content_type=...)``
Load = Callable[..., IngestDocument]


class _Doubling:
    """A size limit that starts at ``first`` and doubles at each ``grow`` up to ``most``."""

    def __init__(self, first: int, most: int) -> None:
        self.limit = max(1, min(first, most))
        self.most = most

    def grow(self) -> None:
        self.limit = max(1, min(self.limit * 2, self.most))


class _Batcher:
    """Documents cut into write batches of about ``limit.limit`` chunks (a larger document
    alone; the limit grows after each batch). A batch runs on across the groups the files are
    read in: the last documents of a group wait for the next group's rather than go alone in a
    small transaction (each commit costs the database about the same whatever its size)."""

    def __init__(self, limit: _Doubling) -> None:
        self.limit = limit
        self.batch: list[IngestDocument] = []
        self.size = 0

    def add(self, d: IngestDocument) -> list[IngestDocument] | None:
        """Take a chunked document; the batch it closed, if adding it would overflow one."""
        n = len(d.chunks)
        full = None
        if self.batch and self.size + n > self.limit.limit:
            full = self.take()
            self.limit.grow()
        self.batch.append(d)
        self.size += n
        return full

    def take(self) -> list[IngestDocument]:
        batch, self.batch, self.size = self.batch, [], 0
        return batch


class FolderPipeline:
    """One run over many files: ``run(paths)`` returns one ``FileResult`` per path, in the
    order given; ``on_result`` hears of each file, in the calling thread, as it is decided.

    Each document is all or nothing, and a failing file (unreadable, empty, refused by the
    store) is reported in its ``FileResult`` without stopping the others; a lost connection
    to the database stops the run (it raises). Once ``cancel`` is set, the files not yet
    written get a ``Cancelled`` error."""

    def __init__(
        self,
        writer: DocumentWriter,
        *,
        load: Load,
        cancel: threading.Event,
        on_result: Callable[[FileResult], None] | None = None,
    ) -> None:
        self.writer = writer
        self.edges = writer.edges
        self.load = load
        self.cancel = cancel
        self.on_result = on_result
        self.out: list[FileResult] = []
        self.in_flight: deque[tuple[Future[list[IngestDocument]], list[IngestDocument]]] = deque()
        self.linker: SimilarityLinker | None = None
        self.writers = 1
        self.created_at = 0

    def run(self, paths: Sequence[str], *, content_type: str | None = None) -> list[FileResult]:
        self.out = [FileResult(path=p) for p in paths]
        self.created_at = run_time()
        self.writer.check_schema()
        self.linker = linker = self.edges.linker(stored_outside=None)
        # not with similarity edges: a chunk is linked to the chunks of its own and earlier
        # batches, so smaller first batches would give their chunks fewer candidates
        ramp = linker is None
        self.writers = writers = self._writers_wanted()
        # one writer at a time: half the size, which that writer commits sooner (a larger
        # transaction costs the server less CPU but kept a lone writer waiting: bench/NOTES.md)
        most = WRITE_BATCH_CHUNKS if writers > 1 else max(1, WRITE_BATCH_CHUNKS // 2)
        batcher = _Batcher(_Doubling(FIRST_WRITE_BATCH_CHUNKS if ramp else most, most))
        # an empty namespace has nothing unchanged: one read instead of one per group (a file
        # written meanwhile by another run is still found by the write, which MERGEs documents)
        presence = self.writer.caps.presence
        nothing_stored = presence is not None and not presence.has_documents()
        with ThreadPoolExecutor(max_workers=writers, thread_name_prefix="kgrag-ingest-writer") as pool:
            try:
                for group in self._groups(paths, content_type, ramp=ramp):
                    docs = [d for d in group if d.error is None]
                    done = [d for d in group if d.error is not None] + (
                        [] if nothing_stored else self.writer.skip_unchanged(docs)
                    )
                    self._finish(done)
                    for batch in self._batches([d for d in docs if d.result is None], batcher):
                        self._send(batch, pool)
                if batcher.batch:
                    self._send(batcher.take(), pool)
                while self.in_flight:
                    self._finish(self._collect())
            finally:
                for future, _ in self.in_flight:
                    future.cancel()
        return self.out

    def _writers_wanted(self) -> int:
        """``WRITERS`` where no batch's write needs an earlier one committed, else one at a
        time (similarity edges point to chunks of earlier batches; cross-document edges read
        the documents written before)."""
        if self.linker is not None or self.edges.cross_document or self.writer.caps.bulk_writer is None:
            return 1
        return WRITERS

    def _finish(self, docs: Sequence[IngestDocument]) -> None:
        """The documents' outcomes into their places, each reported."""
        for d in docs:
            path = self.out[d.position].path
            result = d.result
            if result is not None and result.document is not None:
                # a run keeps every file's outcome to the end: with its document it would
                # hold the whole corpus's text
                result = dataclasses.replace(result, document=None)
            self.out[d.position] = FileResult.failed(path, d.error) if d.error is not None else FileResult(path, result=result)
            if self.on_result is not None:
                self.on_result(self.out[d.position])

    def _collect(self) -> list[IngestDocument]:
        """Wait for the oldest batch being written; its documents, each with its result or error."""
        future, batch = self.in_flight.popleft()
        future.result()
        return batch

    def _send(self, batch: list[IngestDocument], pool: ThreadPoolExecutor) -> None:
        """Embed the batch while the batches before it are written, then hand it to a writer."""
        ready = self.writer.prepare(batch)
        prepared = {id(d) for d in ready}
        self._finish([d for d in batch if id(d) not in prepared])
        if not ready:
            return
        linker = self.linker
        if self.in_flight and linker is not None and chunks_of(self.in_flight[-1][1]) + chunks_of(ready) > linker.window:
            # chunks leaving the linker's window must be committed: the index answers for
            # them from now on
            while self.in_flight:
                self._finish(self._collect())
        self.edges.link(ready, linker)
        while len(self.in_flight) >= self.writers:
            self._finish(self._collect())
        if self.cancel.is_set():
            # cancelled while the batches ahead were written: not this one
            self._finish(mark_cancelled(ready))
            return
        self.in_flight.append((pool.submit(self.writer.write, ready), ready))

    def _groups(self, paths: Sequence[str], content_type: str | None, *, ramp: bool) -> Iterator[list[IngestDocument]]:
        """The files read (or refused) in groups of ``GROUP_FILES`` (with ``ramp``, the first
        ones smaller) or ``GROUP_BYTES`` of text."""
        group: list[IngestDocument] = []
        size = 0
        files = _Doubling(FIRST_GROUP_FILES if ramp else GROUP_FILES, GROUP_FILES)
        for position, path in enumerate(paths):
            try:
                stop_if_cancelled(self.cancel, path)
                doc = self.load(path, content_type=content_type)
            except KgragError as exc:
                doc = IngestDocument.failed(exc)
            doc.position = position
            group.append(doc)
            size += len(doc.text)
            if len(group) >= files.limit or size >= GROUP_BYTES:
                yield group
                group, size = [], 0
                files.grow()
        if group:
            yield group

    def _batches(self, docs: Sequence[IngestDocument], batcher: _Batcher) -> Iterator[list[IngestDocument]]:
        """Chunk the documents and yield the write batches they fill (``_Batcher``); the
        documents of a batch not yet full wait in the batcher. A document that cannot be
        chunked (or comes after a cancel) gets its error and is yielded alone, so it is reported
        at once."""
        for d in docs:
            if self.cancel.is_set():
                yield mark_cancelled([d])
                continue
            try:
                self.writer.chunk(d, created_at=self.created_at)
            except KgragError as exc:
                d.error = exc
                yield [d]
                continue
            full = batcher.add(d)
            if full is not None:
                yield full
