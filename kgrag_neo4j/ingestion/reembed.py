"""Re-embed a namespace with another model, without downtime.

Three phases, each resumable: (1) every chunk and entity of the namespace is embedded again
with the new model from what the database holds (a chunk's content; an entity's name and
description, as the entity build embeds them), the vectors written into the new model's slot
beside the old ones, while searches keep reading the old slot; (2) one transaction switches
the namespace's record to the new model, only once nothing is missing, so a search reads one
model's vectors, never a mix; (3) after ``grace`` seconds (searches that read the record just
before the switch finish with the old vectors), the old vectors are removed in bounded
batches. A run that stops anywhere is finished by running it again: phase 1 embeds only what
has no new vector yet. Chunk ids and content do not change, and no file is read again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from ..entities.embedding_text import entity_embedding_text
from ..errors import InputError, KgragError, ProviderError, StoreError
from ..protocols import EmbeddingProvider
from ..validation import check_int, check_number

__all__ = ["ReembedResult", "reembed_namespace", "REEMBED_BATCH", "REEMBED_GRACE_SECONDS"]

#: texts embedded (and vectors written) per batch
REEMBED_BATCH = 256
#: what is still to embed is read this many at a time: each read looks through the namespace's
#: chunks or entities, so few large reads cost far less than many small ones
READ_PAGE = 4096
#: how long the old vectors stay after the switch, for searches that began just before it
REEMBED_GRACE_SECONDS = 10.0
#: old vectors removed per transaction, of chunks and of entities each
CLEAR_BATCH = 5000
#: switch attempts: each finds what was written meanwhile (an entity build) and embeds it first
SWITCH_ATTEMPTS = 3

#: ``progress(phase, done, total)``: phase is "chunks", "entities" or "cleanup"
Progress = Callable[[str, int, int], None]


@dataclass
class ReembedResult:
    namespace: str
    model: str
    previous_model: str | None
    chunks: int = 0
    entities: int = 0
    removed: int = 0
    switched: bool = False
    finished: bool = False
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class _Stop(Exception):
    """The test hook's stop: the run ends as an interrupted one would."""


def reembed_namespace(
    store: Any,
    embedder: EmbeddingProvider,
    *,
    batch_size: int = REEMBED_BATCH,
    grace: float = REEMBED_GRACE_SECONDS,
    progress: Progress | None = None,
    stop_after_batches: int | None = None,
) -> ReembedResult:
    """Re-embed ``store``'s namespace with ``embedder`` (see the module). Returns what was done;
    ``finished`` is False only when ``stop_after_batches`` (a test hook standing for a killed
    run: that many embedding batches, then stop) stopped it."""
    check_int(batch_size, "batch_size", minimum=1, error=InputError)
    check_number(grace, "grace", minimum=0.0)
    started = time.monotonic()
    previous = store.schema_status().model
    state = store.begin_reembed(embedder.name, embedder.dimensions)
    result = ReembedResult(store.namespace, embedder.name, previous if previous != embedder.name else None)
    budget = [stop_after_batches]
    report = progress or (lambda phase, done, total: None)
    try:
        attempts = 0
        while not state.switched:
            counts = store.reembed_counts(state)
            for kind in ("chunk", "entity"):
                _embed_kind(store, embedder, state, kind, counts[kind], batch_size, report, budget, result)
            store.wait_for_schema()  # the new slot's indexes answer before any search reads them
            outcome = store.switch_reembed(state)
            if outcome["switched"]:
                break
            attempts += 1
            if attempts >= SWITCH_ATTEMPTS:
                raise StoreError(
                    f"namespace {store.namespace!r} kept gaining unembedded chunks or entities "
                    f"({outcome['chunks']} chunks, {outcome['entities']} entities); run the re-embed again"
                )
        result.switched = True
        if state.from_slot != state.to_slot:
            if not state.switched:
                time.sleep(grace)
            while removed := store.clear_old_vectors(state, batch_size=CLEAR_BATCH):
                result.removed += removed
                report("cleanup", result.removed, result.removed)
        result.finished = True
    except _Stop:
        pass
    result.seconds = time.monotonic() - started
    return result


def _embed_kind(store, embedder, state, kind, counts, batch_size, report, budget, result: ReembedResult) -> None:
    """Embed every ``kind`` of the namespace that has no new vector yet, counted in ``result``
    batch by batch (a stopped run says what it did)."""
    phase = "chunks" if kind == "chunk" else "entities"
    done, total = counts["done"], counts["total"]
    report(phase, done, total)
    after = ""
    while True:
        rows = store.reembed_pending(state, kind, after=after, limit=max(READ_PAGE, batch_size))
        if not rows:
            return
        for start in range(0, len(rows), batch_size):
            if budget[0] is not None:
                if budget[0] <= 0:
                    raise _Stop()
                budget[0] -= 1
            page = rows[start : start + batch_size]
            texts = [r["text"] if kind == "chunk" else _entity_text(r, store.namespace) for r in page]
            vectors = _embed(embedder, texts)
            written = store.write_reembedded(state, kind, [{"id": r["id"], "embedding": v} for r, v in zip(page, vectors)])
            if kind == "chunk":
                result.chunks += written
            else:
                result.entities += written
            done += len(page)
            report(phase, done, max(total, done))
        after = rows[-1]["id"]


def _entity_text(row: dict[str, Any], namespace: str) -> str:
    """What the entity build embedded for it (``entity_embedding_text``)."""
    from ..types.entities import Entity

    return entity_embedding_text(
        Entity(id=row["id"], name=row["name"], type="", description=row.get("description") or "", namespace=namespace)
    )


def _embed(embedder: EmbeddingProvider, texts: list[str]) -> list[list[float]]:
    try:
        vectors = embedder.embed(texts, input_type="document")
    except KgragError:
        raise
    except Exception as exc:  # Why: a third-party provider's own error is still a provider failure
        raise ProviderError(f"embedder {embedder.name!r} failed: {type(exc).__name__}: {exc}") from exc
    if len(vectors) != len(texts):
        raise ProviderError(f"the embedder returned {len(vectors)} vectors for {len(texts)} texts")
    return [list(v) for v in vectors]
