"""Keep a namespace's entity graph current: the offline entity graph, maintained document by
document, in bounded batches, the same whatever order documents came and went in.

What a full build and every ingest or delete run, here, one procedure (``maintain_entity_graph``):

1. **scan** every document not linked since its last change: each chunk's capitalised names
   and their cues (``names.scan_chunk``) are kept on the chunk and added into the
   namespace's name statistics (one ``EntityName`` per name). Deleting a chunk subtracts
   exactly what it added (``entity_graph/unlink_chunks``, in the delete's own transaction);
2. **vocabulary changes**: a name that entered or left the vocabulary marks the linked chunks
   that may write it to be linked again (the ``chunk_names`` full-text index finds them), and
   those that mentioned it;
3. **link** the pending documents against the vocabulary names their text contains
   (``linking``): mentions, and co-occurrence strengths added, in integers, to the entities'
   ``CO_OCCURS`` relationships; then the marked chunks alone, in the context their document
   keeps (the forms its chunks write), with the other chunks of the document whose names
   count or resolve differently in the new context. A link computed against a vocabulary that
   moved meanwhile (another ingest) is computed again;
4. **entities** marked as changed get their type and display name from the name's sums,
   their description from their earliest mentioning chunk, an embedding when that changed;
   those no chunk mentions go; their communities are marked stale;
5. **references**: the chunks whose shared-entity links may have changed get them computed
   again (``chunk_links.reference_updates``; an edge exists while either end picks it).

Memory holds two batches of documents at a time (``batch_chunks`` chunks each: one being
computed while the other's writes run in a background thread, ``background.BackgroundWrites``), never the corpus;
every transaction is bounded. Re-running it on an unchanged namespace reads one page and stops.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigurationError, InputError
from ..ids import edge_id
from ..protocols import EmbeddingProvider, embed_batched
from ..types.entities import Entity, normalise_name
from ..validation import check_int
from .background import BackgroundWrites
from .chunk_links import reference_updates
from .descriptions import describe_name
from .embedding_text import entity_embedding_text
from .gazetteer import Gazetteer, name_form
from .link_batches import NAME_PAGE, Linker, document_batches, name_id, scan_batch
from .linking import LinkOptions, first_word, key_words
from .names import display_name, name_type

__all__ = ["MaintainOptions", "MaintenanceResult", "maintain_entity_graph"]

#: ``progress(stage, done, total)``; stages: scan, link, entities, references
Progress = Callable[[str, int, int], None]

#: chunks marked to be linked again per transaction
_MARK_BATCH = 10_000
#: chunks whose text is read at once, to see which of a full-text query's hits write a name
_TEXT_PAGE = 2_000
#: entities updated per transaction (and embedded at once)
_ENTITY_WRITE = 500
#: chunks an older version scanned labelled for the chunk_names index per transaction
LABEL_PAGE = 20_000


@dataclass(frozen=True, slots=True)
class MaintainOptions:
    """``max_entities_per_chunk``, ``max_gap``: see ``linking.LinkOptions``; ``entity_edges``:
    keep ``references`` chunk edges from shared entities, where an entity in more than
    ``edge_max_chunks`` chunks links none and a chunk picks its ``edges_per_chunk`` heaviest;
    ``batch_chunks``: chunks held in memory at once; ``batch_size``: texts per embedding call."""

    max_entities_per_chunk: int = 20
    max_gap: int = 30
    entity_edges: bool = True
    edge_max_chunks: int = 10
    edges_per_chunk: int = 10
    batch_chunks: int = 500
    batch_size: int = 64

    def __post_init__(self) -> None:
        check_int(self.max_entities_per_chunk, "max_entities_per_chunk", minimum=1)
        check_int(self.max_gap, "max_gap", minimum=0)
        check_int(self.edge_max_chunks, "edge_max_chunks", minimum=2, maximum=40)
        check_int(self.edges_per_chunk, "edges_per_chunk", minimum=1)
        check_int(self.batch_chunks, "batch_chunks", minimum=1)
        check_int(self.batch_size, "batch_size", minimum=1)


@dataclass
class MaintenanceResult:
    """What one run did: documents and chunks linked (``relinked``: documents some chunks of
    which were linked again because a name entered or left the vocabulary, ``relinked_chunks``
    those chunks; ``rewritten``: chunks whose links were new or changed, the only ones
    written), names added to the vocabulary and removed,
    entities brought up to date and deleted, ``references`` edges written, seconds per stage."""

    documents: int = 0
    chunks: int = 0
    relinked: int = 0
    relinked_chunks: int = 0
    rewritten: int = 0
    names_entered: int = 0
    names_left: int = 0
    entities: int = 0
    deleted: int = 0
    entity_edges: int = 0
    seconds: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def maintain_entity_graph(
    store: Any,
    embedder: EmbeddingProvider,
    *,
    create: bool = False,
    rebuild: bool = False,
    names: Sequence[str] = (),
    options: MaintainOptions = MaintainOptions(),
    progress: Progress | None = None,
) -> MaintenanceResult | None:
    """Bring the namespace's entity graph up to date with its documents (see the module).

    Returns None, doing nothing, when the namespace has no entity graph and ``create`` is
    false (a plain ingest into a namespace nobody built entities for). ``rebuild``: clear the
    graph first (bounded transactions) and link everything anew. ``names``: names the user
    gives, kept in the vocabulary."""
    if isinstance(names, str):
        raise InputError("names must be a list of names, not one string")
    report = progress or (lambda stage, done, total: None)
    result = MaintenanceResult()
    clock = [time.perf_counter()]

    def lap(stage: str) -> None:
        now = time.perf_counter()
        result.seconds[stage] = round(result.seconds.get(stage, 0.0) + now - clock[0], 3)
        clock[0] = now

    if rebuild:
        store.clear_entity_graph()
    given = _given_rows(store.namespace, names)
    if create or given:
        store.record_entity_build(_now(), given)
    elif store.entity_graph_generation() is None:
        return None
    store.ensure_embedder(embedder.name, embedder.dimensions)
    store.ensure_entity_graph_schema()
    _upgrade(store)
    lap("setup")

    writes = BackgroundWrites()
    try:
        # 1. scan: every pending document's chunks not scanned yet
        for batch in document_batches(store, options.batch_chunks):
            scan_batch(store, batch, writes, most=options.batch_chunks)
            report("scan", sum(len(d["chunks"]) for d in batch), 0)
        writes.drain()
        lap("scan")

        # 2 and 3: link the pending documents, and again the chunks a vocabulary change touches
        _link(store, options, result, report, writes)
        lap("link")

        # 4. entities
        _settle_entities(store, embedder, options, result, report, writes)
    finally:
        writes.close()
    # the writes describe co-occurrences themselves; this settles only marks an older version left
    store.settle_relations()
    lap("entities")

    # 5. references
    if options.entity_edges:
        result.entity_edges = _settle_references(store, options, report)
    lap("references")
    store.record_entity_build(_now(), [])
    return result


def _link(store: Any, options: MaintainOptions, result: MaintenanceResult, report: Progress, writes: BackgroundWrites) -> None:
    """Link until no vocabulary change is left. The linker's vocabulary (the whole of it, in a
    large run) goes with it: the entities stage after it must not hold it too."""
    link_options = LinkOptions(max_entities_per_chunk=options.max_entities_per_chunk, max_gap=options.max_gap)
    linker = Linker(store, link_options, options.batch_chunks, result, report, writes)
    while True:
        _vocabulary_changes(store, result)
        linked = linker.link_pending()
        linked += linker.relink_marked()
        if not linked and not store.changed_names(limit=1):
            return


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _given_rows(namespace: str, names: Sequence[str]) -> list[dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    for raw in names:
        if not isinstance(raw, str):
            raise InputError(f"names must be strings, got {type(raw).__name__}")
        key = normalise_name(raw)
        if key and key not in rows:
            rows[key] = {
                "id": name_id(namespace, key),
                "key": key,
                "first": first_word(key),
                "words": key_words(key),
                "form": raw.strip(),
            }
    return [rows[k] for k in sorted(rows)]


def _upgrade(store: Any) -> None:
    """Bring a graph an older version made up to what this one reads (once each: the graph then
    records it): names carry their key's words, scanned chunks are labelled for the
    chunk_names index (without it, the chunks that write a name entering the vocabulary are
    not found)."""
    record = store.entity_graph_record()
    if record is None:
        return
    if not record.get("name_scanned", True):
        while store.label_scanned_chunks(limit=LABEL_PAGE) >= LABEL_PAGE:
            pass
    if not record["name_words"]:
        _name_words(store)


def _name_words(store: Any) -> None:
    after = ""
    while True:
        page = store.names_without_words(after=after, limit=NAME_PAGE)
        done = len(page) < NAME_PAGE
        store.set_name_words(
            [{"key": r["key"], "first": first_word(r["key"]), "words": key_words(r["key"])} for r in page if r["missing"]],
            done=done,
        )
        if done:
            return
        after = page[-1]["key"]


def _vocabulary_changes(store: Any, result: MaintenanceResult) -> None:
    """Mark to be linked again the chunks a name entering or leaving the vocabulary touches."""
    linked: bool | None = None  # none is linked yet in a first build: nothing to send back
    while True:
        changed = store.changed_names(limit=5000)
        if not changed:
            return
        entered = [c for c in changed if c["entered"]]
        left = [c["key"] for c in changed if not c["entered"]]
        result.names_entered += len(entered)
        result.names_left += len(left)
        # a one-word name counts only where a document writes it capitalised at least once
        # (linking's lower-case rule), so its writers are looked for that way: a common
        # word's writers in documents that never capitalise it cannot change, and are most of them
        whole = [c for c in changed if c["changed"] is None]
        words = [c["key"] for c in whole if _plain_word(c["key"], c["forms"] or [])]
        plain = set(words)
        phrases = [f for c in whole if c["key"] not in plain for f in (c["key"], *(c["forms"] or []))]
        # a vocabulary name that gained or lost a form changes only the links of that form's
        # writers (its key is matched all along)
        phrases += [f for c in changed if c["changed"] is not None for f in c["changed"] if name_form(f) != name_form(c["key"])]
        if linked is None:
            linked = store.has_linked_documents()
        chunks: list[tuple[str, str]] = []
        if linked and (phrases or words):
            chunks = _writing(store, store.chunks_writing(phrases, [], words=words), [*phrases, *words])
        # a name that left may still have shaped a chunk's links without being written there
        # (a short form it owned, a shorter name it hid): the chunks that mention it are linked
        # again too, and the context of their documents brings the rest
        if linked and left:
            chunks = sorted(set(chunks) | set(store.chunks_writing([], left)))
        result.relinked += len({document for document, _ in chunks})
        ids = [chunk for _, chunk in chunks]
        handled = [{"key": c["key"], "marked": c["marked"]} for c in changed]
        # the names' marks go with the last batch: a run stopped before it marks them again
        for start in range(0, max(len(ids), 1), _MARK_BATCH):
            last = start + _MARK_BATCH >= len(ids)
            marked = store.mark_chunks_relink(ids[start : start + _MARK_BATCH], handled if last else [])
            result.relinked_chunks += int(marked["chunks"])


def _writing(store: Any, chunks: Sequence[tuple[str, str]], names: Sequence[str]) -> list[tuple[str, str]]:
    """The chunks among ``chunks`` (a full-text query's: the index splits words in more places
    than the gazetteer does) whose text writes one of ``names`` where the gazetteer could
    match it: the others' links cannot change."""
    names_found = Gazetteer(names)
    out: list[tuple[str, str]] = []
    for start in range(0, len(chunks), _TEXT_PAGE):
        part = chunks[start : start + _TEXT_PAGE]
        texts = store.chunk_texts(sorted({chunk for _, chunk in part}))
        out += [(d, c) for d, c in part if names_found.writes_any(texts.get(c, ""))]
    return out


def _plain_word(key: str, forms: Sequence[str]) -> bool:
    """A one-word name of lower-case ASCII letters and digits, every form of which is the
    word itself in some case: its matches are exactly that word, whole."""
    return len(key) > 1 and key.isascii() and key.isalnum() and key == key.lower() and all(name_form(f) == key for f in forms)


def _settle_entities(
    store: Any,
    embedder: EmbeddingProvider,
    options: MaintainOptions,
    result: MaintenanceResult,
    report: Progress,
    writes: BackgroundWrites,
) -> None:
    """Update every dirty entity, and mark the chunks of those whose chunks changed in a way
    that changes their ``references`` edges (in the same transaction)."""
    after = ""
    moved = 0
    passes = 0
    updates: deque[Future[Any]] = deque()
    while True:
        page = store.dirty_entities(after=after, limit=2000)
        if not page:
            while updates:
                moved += _count_update(updates.popleft(), result, report)
            # entities another ingest marked between this run's read and its update are still
            # dirty: read again from the start (that ingest reads them too, after its writes)
            if not moved:
                return
            passes += 1
            if passes >= 20:  # pragma: no cover - another ingest marked them twenty times over
                raise ConfigurationError("entities kept changing while being updated; run the build again")
            after, moved = "", 0
            continue
        after = page[-1]["id"]
        rows: list[dict[str, Any]] = []
        texts: list[str | None] = []  # each row's text to embed; None: its vector stands
        for r in page:
            df, old_df = int(r["df"]), int(r["old_df"])
            name, type_, description, source = r["name"], r["type"], r["description"], r["source_chunk_id"]
            if r["maintained"]:
                display = display_name(r["forms"], r["form_counts"]) or r["key"]
                person, location, weak, occurrences, _titles = r["stats"]
                type_ = name_type(display, {"person": person, "location": location, "weak": weak, "occurrences": occurrences})
                name = display
                earliest = r["earliest"]
                if earliest is not None:
                    source = earliest["id"]
                    description = describe_name(earliest["content"] or "", display, int(earliest["first"]))
            changed = (name, type_, description) != (r["name"], r["type"], r["description"]) or df != old_df
            row = {
                "id": r["id"],
                "touches": r["touches"],
                "name": name,
                "type": type_,
                "description": description,
                "source_chunk_id": source,
                "embedding": None,
                "df": df,
                "changed": changed,
                "renamed": name != r["name"],
                "references": _references_move(old_df, df, options.edge_max_chunks, rechunked=bool(r["rechunked"])),
            }
            embed = (
                r["maintained"] and df > 0 and ((name, description) != (r["name"], r["description"]) or not r["has_embedding"])
            )
            texts.append(
                entity_embedding_text(
                    Entity(id=r["id"], name=name, type=type_, description=description, namespace=store.namespace)
                )
                if embed
                else None
            )
            rows.append(row)
        # vectors are made for one write at a time, just before it: each write queued holds
        # its own 500 vectors, not its page's 2,000 (as Python floats, 8 KB a vector)
        for start in range(0, len(rows), _ENTITY_WRITE):
            part = rows[start : start + _ENTITY_WRITE]
            todo = [(row, text) for row, text in zip(part, texts[start : start + _ENTITY_WRITE]) if text is not None]
            if todo:
                vectors = embed_batched(embedder, [text for _, text in todo], batch_size=options.batch_size)
                for (row, _), vector in zip(todo, vectors):
                    row["embedding"] = [float(x) for x in vector]
            # the next part is described, and the next page read, while this one is written
            updates.append(writes.submit(store.update_maintained_entities, part))
            while len(updates) > 1 or (updates and updates[0].done()):
                moved += _count_update(updates.popleft(), result, report)


def _references_move(old_df: int, df: int, most: int, *, rechunked: bool) -> bool:
    """Whether an entity's chunks changed so that the ``references`` edges of chunks that
    were not linked again change: it links its chunks while it is in 2 to ``most`` of them
    (with a weight from the count), so only a count that moved in or out of that range, or
    within it, does, or the same count over other chunks (``rechunked``: a chunk stopped
    mentioning it, another began); and not for an entity that had none at its last update,
    since every chunk mentioning it now was linked again (and is marked already)."""
    if old_df == 0 or (df == old_df and not rechunked):
        return False
    return 2 <= old_df <= most or 2 <= df <= most


def _count_update(update: Future[Any], result: MaintenanceResult, report: Progress) -> int:
    """Count a page of entity updates once written; returns the entities another ingest
    marked meanwhile (left dirty, read again)."""
    done = update.result()
    result.entities += int(done["updated"])
    result.deleted += int(done["deleted"])
    report("entities", result.entities + result.deleted, 0)
    return int(done["moved"])


def _settle_references(store: Any, options: MaintainOptions, report: Progress) -> int:
    unit = 1
    for n in range(1, options.edge_max_chunks):
        unit = unit * n // _gcd(unit, n)
    written = 0

    def decide(found: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
        updates, drop = reference_updates(found, per_chunk=options.edges_per_chunk, unit=unit)
        rows = [
            {"id": edge_id(s, t, "references"), "source_id": s, "target_id": t, "weight": w, "picked": p}
            for s, t, w, p in updates
        ]
        return rows, [{"a": a, "b": b} for a, b in drop]

    while True:
        ids = store.dirty_chunks(limit=1000)
        if not ids:
            return written
        written += store.update_references(ids, max_chunks=options.edge_max_chunks, unit=unit, decide=decide)
        report("references", written, 0)


def _gcd(a: int, b: int) -> int:
    while b:
        a, b = b, a % b
    return a
