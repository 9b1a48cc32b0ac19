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

Memory holds one batch of documents at a time (``batch_chunks`` chunks), never the corpus;
every transaction is bounded. Re-running it on an unchanged namespace reads one page and stops.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigurationError, InputError
from ..ids import edge_id
from ..protocols import EmbeddingProvider, embed_batched
from ..types.entities import Entity, normalise_name
from ..validation import check_int
from .chunk_links import reference_updates, title_name
from .descriptions import describe_name
from .embedding_text import entity_embedding_text
from .gazetteer import name_form
from .linking import (
    ChunkLinks,
    DocumentForms,
    LinkContext,
    LinkOptions,
    VocabularyMatcher,
    VocabularyName,
    add_forms,
    chunk_forms,
    document_context,
    first_word,
    form_key,
    key_words,
    link_chunk,
    sum_forms,
    text_words,
)
from .names import display_name, maintained_entity_id, name_type, scan_chunk

__all__ = ["MaintainOptions", "MaintenanceResult", "maintain_entity_graph"]

#: ``progress(stage, done, total)``; stages: scan, link, entities, references
Progress = Callable[[str, int, int], None]

_DOCUMENT_PAGE = 2000
#: once a run has linked this many chunks, it links against the whole vocabulary held in
#: memory (one read of it, if it has at most ``_VOCABULARY_IN_MEMORY`` names); before, each
#: batch looks up the names its text may contain. A read of the whole vocabulary grows with
#: the corpus, so an ingest of a few documents into a large namespace must not pay it.
_WHOLE_VOCABULARY_AFTER = 5_000
_VOCABULARY_IN_MEMORY = 300_000
#: documents with marked chunks linked per transaction
_RELINK_PAGE = 200
#: chunks marked to be linked again per transaction
_MARK_BATCH = 10_000
_NAME_PAGE = 20_000


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


class _Writes:
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
    _ensure_name_words(store)
    lap("setup")

    writes = _Writes()
    try:
        # 1. scan: every pending document's chunks not scanned yet
        for batch in _document_batches(store, options.batch_chunks):
            _scan_batch(store, batch, writes)
            report("scan", sum(len(d["chunks"]) for d in batch), 0)
        writes.drain()
        lap("scan")

        # 2 and 3: link the pending documents, and again the chunks a vocabulary change touches
        linker = _Linker(store, options, result, report, writes)
        while True:
            _vocabulary_changes(store, result)
            linked = linker.link_pending()
            linked += linker.relink_marked()
            if not linked and not store.changed_names(limit=1):
                break
        lap("link")

        # 4. entities
        touched = _settle_entities(store, embedder, options, result, report, writes)
    finally:
        writes.close()
    if touched:
        for start in range(0, len(touched), 5000):
            store.mark_entity_chunks(touched[start : start + 5000])
    store.settle_relations()
    lap("entities")

    # 5. references
    if options.entity_edges:
        result.entity_edges = _settle_references(store, options, report)
    lap("references")
    store.record_entity_build(_now(), [])
    return result


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _name_id(namespace: str, key: str) -> str:
    return "name_" + maintained_entity_id(namespace, key)[4:]


def _given_rows(namespace: str, names: Sequence[str]) -> list[dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    for raw in names:
        if not isinstance(raw, str):
            raise InputError(f"names must be strings, got {type(raw).__name__}")
        key = normalise_name(raw)
        if key and key not in rows:
            rows[key] = {
                "id": _name_id(namespace, key),
                "key": key,
                "first": first_word(key),
                "words": key_words(key),
                "form": raw.strip(),
            }
    return [rows[k] for k in sorted(rows)]


def _document_batches(store: Any, batch_chunks: int, *, every: bool = False) -> Iterator[list[dict[str, Any]]]:
    """The pending documents with their leaf chunks, about ``batch_chunks`` chunks a batch."""
    after = ""
    while True:
        ids = store.entity_pending_documents(after=after, limit=_DOCUMENT_PAGE, every=every)
        if not ids:
            return
        after = ids[-1]
        batch: list[dict[str, Any]] = []
        size = 0
        for start in range(0, len(ids), 500):
            for doc in store.entity_document_chunks(ids[start : start + 500]):
                batch.append(doc)
                size += len(doc["chunks"])
                if size >= batch_chunks:
                    yield batch
                    batch, size = [], 0
        if batch:
            yield batch


def _scan_batch(store: Any, batch: Sequence[dict[str, Any]], writes: _Writes | None = None) -> None:
    """Add the name scans of ``batch``'s chunks not scanned yet (in the background with
    ``writes``)."""
    rows = []
    for doc in batch:
        title = title_name(doc["title"])
        for i, chunk in enumerate(doc["chunks"]):
            if chunk["scanned"]:
                continue
            scan = scan_chunk(chunk["id"], chunk["content"] or "", title_name=title if i == 0 else "")
            rows.append(
                {
                    "chunk_id": chunk["id"],
                    "names": [
                        {**s.row(), "id": _name_id(store.namespace, s.key), "first": first_word(s.key), "words": key_words(s.key)}
                        for s in scan.names
                    ],
                }
            )
    if rows and writes is not None:
        writes.submit(store.apply_name_scans, rows)
    elif rows:
        store.apply_name_scans(rows)


def _ensure_name_words(store: Any) -> None:
    """Give the names of a graph made before names carried their key's words those words
    (once: the graph then records it)."""
    record = store.entity_graph_record()
    if record is None or record["name_words"]:
        return
    after = ""
    while True:
        page = store.names_without_words(after=after, limit=_NAME_PAGE)
        done = len(page) < _NAME_PAGE
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
        # a name that left may still have shaped a chunk's links without being written there
        # (a short form it owned, a shorter name it hid): the chunks that mention it are linked
        # again too, and the context of their documents brings the rest
        # a one-word name counts only where a document writes it capitalised at least once
        # (linking's lower-case rule), so its writers are looked for that way: a common
        # word's writers in documents that never capitalise it cannot change, and are most of them
        words = [c["key"] for c in changed if _plain_word(c["key"], c["forms"] or [])]
        plain = set(words)
        phrases = [f for c in changed if c["key"] not in plain for f in (c["key"], *(c["forms"] or []))]
        if linked is None:
            linked = store.has_linked_documents()
        chunks = store.chunks_writing(phrases, left, words=words) if linked and (phrases or left or words) else []
        result.relinked += len({document for document, _ in chunks})
        ids = [chunk for _, chunk in chunks]
        keys = [c["key"] for c in changed]
        # the names' marks go with the last batch: a run stopped before it marks them again
        for start in range(0, max(len(ids), 1), _MARK_BATCH):
            last = start + _MARK_BATCH >= len(ids)
            marked = store.mark_chunks_relink(ids[start : start + _MARK_BATCH], keys if last else [])
            result.relinked_chunks += int(marked["chunks"])


def _plain_word(key: str, forms: Sequence[str]) -> bool:
    """A one-word name of lower-case ASCII letters and digits, every form of which is the
    word itself in some case: its matches are exactly that word, whole."""
    return len(key) > 1 and key.isascii() and key.isalnum() and key == key.lower() and all(name_form(f) == key for f in forms)


def _vocabulary_name(row: dict[str, Any]) -> VocabularyName:
    return VocabularyName(row["key"], display_name(row["forms"], row["form_counts"]) or row["key"], tuple(row["forms"]))


def _whole_vocabulary(store: Any) -> VocabularyMatcher | None:
    """The namespace's whole vocabulary as one matcher, or None when it is over
    ``_VOCABULARY_IN_MEMORY`` names (then each batch looks its names up)."""
    names: dict[str, VocabularyName] = {}
    after = ""
    while True:
        page = store.vocabulary_page(after=after, limit=_NAME_PAGE)
        for row in page:
            if row["accepted"]:
                names[row["key"]] = _vocabulary_name(row)
        if len(names) > _VOCABULARY_IN_MEMORY:
            return None
        if len(page) < _NAME_PAGE:
            return VocabularyMatcher(names)
        after = page[-1]["key"]


class _Linker:
    """Links pending documents as a whole (``link_pending``) and marked chunks alone
    (``relink_marked``), against the whole vocabulary once a run is large, else against the
    names each batch's words may start (``entity_graph/vocabulary_words``)."""

    def __init__(self, store: Any, options: MaintainOptions, result: MaintenanceResult, report: Progress, writes: _Writes):
        self.store = store
        self.writes = writes
        self.options = LinkOptions(max_entities_per_chunk=options.max_entities_per_chunk, max_gap=options.max_gap)
        self.batch_chunks = options.batch_chunks
        self.result = result
        self.report = report
        self.whole: tuple[int | None, VocabularyMatcher | None] | None = None  # (generation, the whole vocabulary)
        self.words: dict[str, tuple[str, ...]] = {}  # text_words' cache
        # the names looked up so far, by their key's first word (with all the key's words) and
        # by key (titles), while the vocabulary is at generation ``known_at``
        self.known_at: int | None = None
        self.by_word: dict[str, list[tuple[tuple[str, ...], VocabularyName]]] = {}
        self.by_key: dict[str, VocabularyName | None] = {}
        self.pool: VocabularyMatcher | None = None

    # -- the vocabulary a batch is linked against ------------------------------------------
    def matcher(self, generation: int | None, chunks: int, texts: Sequence[str], title_keys: Sequence[str]) -> VocabularyMatcher:
        """The vocabulary names ``texts`` can hold: the whole vocabulary once the run is large,
        else the names all of whose key's words the texts write, looked up by their first word
        (a word's names are remembered for the rest of the run, while the vocabulary stays at
        its generation: batches of one run share most words)."""
        if self.result.chunks + chunks >= _WHOLE_VOCABULARY_AFTER:
            if self.whole is None or self.whole[0] != generation:
                self.whole = (generation, _whole_vocabulary(self.store))
            if self.whole[1] is not None:
                return self.whole[1]
        if self.known_at != generation:
            self.known_at, self.by_word, self.by_key, self.pool = generation, {}, {}, None
        words = text_words(texts, self.words)
        missing = sorted(w for w in words if w not in self.by_word)
        if missing:
            for w in missing:
                self.by_word[w] = []
            for r in self.store.vocabulary_by_words(missing):
                self.by_word[r["first"]].append((tuple(r["words"] or key_words(r["key"])), _vocabulary_name(r)))
        names = {n.key: n for w in words for need, n in self.by_word[w] if all(x in words for x in need)}
        keys = sorted({k for k in title_keys if k and k not in self.by_key})
        if keys:
            found = {r["key"]: _vocabulary_name(r) for r in self.store.vocabulary_names(keys)}
            self.by_key.update({k: found.get(k) for k in keys})
        for k in title_keys:
            name = self.by_key.get(k) if k else None
            if name is not None:
                names[k] = name
        # the names linked against so far are vocabulary names too, and a superset gives the same
        # links: the last automaton serves again unless this batch needs a name it lacks
        if self.pool is None or any(k not in self.pool.vocabulary for k in names):
            self.pool = VocabularyMatcher({**(self.pool.vocabulary if self.pool else {}), **names})
        return self.pool

    # -- pending documents, whole -----------------------------------------------------------
    def link_pending(self) -> int:
        """Link the pending documents as a whole, a batch at a time: each batch's links are
        written in the background while the next is computed; a write refused (the
        vocabulary or a document moved meanwhile: another ingest) is computed again."""
        linked = 0
        while True:
            progressed = 0
            written: deque[tuple[Future[Any], list[dict[str, Any]], _Links]] = deque()
            for batch in _document_batches(self.store, self.batch_chunks):
                # a document another ingest stored after this run's scan: its names count before
                # it is linked (linked, it would never be scanned)
                _scan_batch(self.store, batch)
                # read, not locked: the write in flight holds the graph's lock, and a stale
                # generation only has the write refused and computed again
                record = self.store.entity_graph_record()
                generation = record["generation"] if record else None
                links = _Links(self.store.namespace)
                self.link_whole(links, batch, generation)
                written.append((self.writes.submit(self.store.write_entity_links, generation, links.params()), batch, links))
                while len(written) > 1:
                    progressed += self._settle(*written.popleft())
            while written:
                progressed += self._settle(*written.popleft())
            linked += progressed
            if not progressed:
                return linked

    def _settle(self, future: Future[Any], batch: list[dict[str, Any]], links: _Links) -> int:
        """Count a batch whose write was sent; one refused is linked again, in the foreground."""
        if not future.result():
            self.writes.drain()
            for _attempt in range(20):
                batch = self.store.entity_document_chunks([d["document_id"] for d in batch])
                generation = self.store.entity_graph_generation()
                links = _Links(self.store.namespace)
                self.link_whole(links, batch, generation)
                if self.store.write_entity_links(generation, links.params()):
                    break
            else:  # pragma: no cover - twenty vocabulary changes during one batch
                raise ConfigurationError("the vocabulary kept changing while linking; run the build again")
        self.result.documents += len(batch)
        self.result.chunks += sum(len(d["chunks"]) for d in batch)
        self.result.rewritten += links.rewritten
        self.report("link", self.result.chunks, 0)
        return len(batch)

    def link_whole(self, links: _Links, batch: Sequence[dict[str, Any]], generation: int | None) -> None:
        """Link documents as a whole into ``links``."""
        if not batch:
            return
        titles = [normalise_name(title_name(d["title"])) for d in batch]
        texts = [c["content"] or "" for d in batch for c in d["chunks"]]
        matcher = self.matcher(generation, len(texts), texts, titles)
        namespace = self.store.namespace
        for d, title_key in zip(batch, titles):
            chunks = d["chunks"]
            matches = [matcher.gazetteer.find(c["content"] or "") for c in chunks]
            forms = [chunk_forms(found) for found in matches]
            document_forms = sum_forms(forms)
            context = document_context(document_forms)
            for i, (c, found, share) in enumerate(zip(chunks, matches, forms)):
                link = link_chunk(
                    namespace,
                    c["id"],
                    c["content"] or "",
                    found,
                    matcher,
                    context,
                    title_key=title_key if i == 0 else "",
                    options=self.options,
                    forms=share,
                )
                links.add(link, c, d["document_id"])
            links.document(d, document_forms, whole=True, settled=[c["id"] for c in chunks if c.get("relink")])

    # -- marked chunks, alone -----------------------------------------------------------------
    def relink_marked(self) -> int:
        """Link the chunks marked to be linked again, a page of documents at a time (each
        page's links written in the background while the next is computed; one refused is
        computed again); a document to be linked as a whole anyway (a new version, or one that
        keeps no link context) is linked so here. Returns the documents linked."""
        linked = 0
        after = ""
        written: deque[tuple[Future[Any], list[str], _Links, int]] = deque()
        while True:
            ids = self.store.relink_documents(after=after, limit=_RELINK_PAGE)
            if not ids:
                break
            after = ids[-1]
            record = self.store.entity_graph_record()  # read: the write in flight holds the lock
            generation = record["generation"] if record else None
            documents = self.store.relink_chunks(ids)
            links = _Links(self.store.namespace)
            chunks = self.relink(links, documents, generation)
            written.append((self.writes.submit(self.store.write_entity_links, generation, links.params()), ids, links, chunks))
            while len(written) > 1:
                linked += self._settle_relink(*written.popleft())
        while written:
            linked += self._settle_relink(*written.popleft())
        return linked

    def _settle_relink(self, future: Future[Any], ids: list[str], links: _Links, chunks: int) -> int:
        """Count a page of marked chunks whose write was sent; one refused is linked again,
        in the foreground."""
        if not future.result():
            self.writes.drain()
            for _attempt in range(20):
                generation = self.store.entity_graph_generation()
                documents = self.store.relink_chunks(ids)
                links = _Links(self.store.namespace)
                chunks = self.relink(links, documents, generation)
                if self.store.write_entity_links(generation, links.params()):
                    break
            else:  # pragma: no cover - twenty vocabulary changes during one batch
                raise ConfigurationError("the vocabulary kept changing while linking; run the build again")
        self.result.chunks += chunks
        self.result.rewritten += links.rewritten
        self.report("link", self.result.chunks, 0)
        return len(ids)

    def relink(self, links: _Links, documents: Sequence[dict[str, Any]], generation: int | None) -> int:
        """Link the marked chunks of ``documents`` (``entity_graph/relink_chunks`` rows) into
        ``links``, with the other chunks whose names count or resolve differently in their
        document's new context; returns the chunks linked."""
        whole_ids = [d["document_id"] for d in documents if _linked_whole(d)]
        # a document whose marks were handled meanwhile has no chunk left to link
        partial = [d for d in documents if not _linked_whole(d) and d["chunks"]]
        whole = self.store.entity_document_chunks(whole_ids) if whole_ids else []
        self.link_whole(links, whole, generation)
        count = sum(len(d["chunks"]) for d in whole)
        if not partial:
            return count
        texts = [c["content"] or "" for d in partial for c in d["chunks"]]
        titles = [normalise_name(title_name(d["title"])) for d in partial]
        matcher = self.matcher(generation, len(texts), texts, titles)
        plans: list[tuple[dict[str, Any], list[Any], list[dict[str, tuple[int, int]]], DocumentForms, LinkContext]] = []
        wanted: list[dict[str, Any]] = []
        for d in partial:
            kept = _document_forms(d["link_forms"], d["link_counts"])
            matches = [matcher.gazetteer.find(c["content"] or "") for c in d["chunks"]]
            shares = [chunk_forms(found) for found in matches]
            now = dict(kept)
            for c, share in zip(d["chunks"], shares):
                add_forms(now, _chunk_share(c), -1)
                add_forms(now, share, 1)
            context = document_context(now)
            changed = document_context(kept).changed_keys(context)
            forms = sorted(f for f in set(kept) | set(now) if form_key(f) in changed)
            if forms:
                wanted.append({"id": d["document_id"], "forms": forms})
            plans.append((d, matches, shares, now, context))
        extra = {r["document_id"]: r["chunks"] for r in self.store.context_chunks(wanted)} if wanted else {}
        if extra:
            more = [c["content"] or "" for chunks in extra.values() for c in chunks]
            matcher = self.matcher(generation, len(texts) + len(more), texts + more, titles)
        namespace = self.store.namespace
        for d, matches, shares, now, context in plans:
            title_key = normalise_name(title_name(d["title"]))
            others = extra.get(d["document_id"], [])
            work = [(c, found, share) for c, found, share in zip(d["chunks"], matches, shares)]
            work += [(c, found, chunk_forms(found)) for c in others for found in [matcher.gazetteer.find(c["content"] or "")]]
            for c, found, share in work:
                link = link_chunk(
                    namespace,
                    c["id"],
                    c["content"] or "",
                    found,
                    matcher,
                    context,
                    title_key=title_key if c["id"] == d["first_chunk"] else "",
                    options=self.options,
                    forms=share,
                )
                links.add(link, c, d["document_id"])
            links.document(d, now, whole=False, settled=[c["id"] for c in d["chunks"]])
            count += len(work)
        return count


def _linked_whole(document: dict[str, Any]) -> bool:
    """Whether a document with marked chunks is linked again as a whole: a new version waits
    for that anyway, and one linked before documents kept their link context has none to
    take a chunk's share out of (nor have its chunks one)."""
    return bool(
        document["pending"] or document["link_forms"] is None or any(c.get("link_forms") is None for c in document["chunks"])
    )


def _document_forms(forms: Sequence[str] | None, counts: Sequence[int] | None) -> DocumentForms:
    counts = list(counts or [])
    return {f: (counts[3 * i], counts[3 * i + 1], counts[3 * i + 2]) for i, f in enumerate(forms or [])}


def _chunk_share(chunk: dict[str, Any]) -> dict[str, tuple[int, int]]:
    counts = list(chunk.get("link_counts") or [])
    return {f: (counts[2 * i], counts[2 * i + 1]) for i, f in enumerate(chunk.get("link_forms") or [])}


class _Links:
    """What a batch of links writes (``entity_graph/write_links``'s parameters): only the
    chunks whose links differ from what they hold."""

    def __init__(self, namespace: str):
        self.namespace = namespace
        self.entities: dict[str, str] = {}
        self.earliest: dict[str, tuple[str, str]] = {}  # entity -> (place, chunk) of its earliest mention here
        self.mentions: list[dict[str, Any]] = []
        self.pairs: dict[tuple[str, str], list[int]] = {}
        self.chunks: list[dict[str, Any]] = []
        self.held: list[str] = []  # chunks written whose old links are taken back first
        self.documents: list[dict[str, Any]] = []
        self.settled: list[str] = []

    @property
    def rewritten(self) -> int:
        return len(self.chunks)

    def add(self, link: ChunkLinks, stored: dict[str, Any] | None, document_id: str) -> None:
        chunk_mentions = [
            (maintained_entity_id(self.namespace, key), key, count, first)
            for key, (count, first) in sorted(link.mentions.items())
        ]
        ordered = sorted(link.pairs.items())
        forms = sorted(link.forms.items())
        row = {
            "chunk_id": link.chunk_id,
            "pair_a": [a for (a, _), _ in ordered],
            "pair_b": [b for (_, b), _ in ordered],
            "pair_strength": [v[0] for _, v in ordered],
            "pair_windows": [v[1] for _, v in ordered],
            "link_forms": [f for f, _ in forms],
            "link_counts": [n for _, counts in forms for n in counts],
        }
        # a document linked again because one name moved keeps most of its chunks' links:
        # only those that differ from what the chunk holds are taken back and written
        if _unchanged(stored, row, chunk_mentions):
            return
        if stored is None or stored.get("pair_a") is not None or stored.get("mentions"):
            self.held.append(link.chunk_id)
        place = _place(stored, document_id, link.chunk_id)
        for eid, key, count, first in chunk_mentions:
            self.entities[eid] = key
            if eid not in self.earliest or place < self.earliest[eid][0]:
                self.earliest[eid] = (place, link.chunk_id)
            self.mentions.append({"chunk_id": link.chunk_id, "entity_id": eid, "count": count, "first": first})
        for (a, b), (strength, windows) in ordered:
            total = self.pairs.setdefault((a, b), [0, 0])
            total[0] += strength
            total[1] += windows
        self.chunks.append(row)

    def document(self, d: dict[str, Any], forms: DocumentForms, *, whole: bool, settled: Sequence[str]) -> None:
        ordered = sorted(forms.items())
        self.documents.append(
            {
                "id": d["document_id"],
                "content_hash": d["content_hash"],
                "links_version": d.get("links_version", 0),
                "whole": whole,
                "link_forms": [f for f, _ in ordered],
                "link_counts": [n for _, counts in ordered for n in counts],
            }
        )
        self.settled += settled

    def params(self) -> dict[str, Any]:
        return {
            "entities": [
                {"id": e, "key": self.entities[e], "place": self.earliest[e][0], "source": self.earliest[e][1]}
                for e in sorted(self.entities)
            ],
            "mentions": self.mentions,
            "pairs": [{"a": a, "b": b, "strength": v[0], "windows": v[1]} for (a, b), v in sorted(self.pairs.items())],
            "chunks": self.chunks,
            "unlink": self.held,
            "documents": self.documents,
            "settled": self.settled,
        }


def _place(chunk: dict[str, Any] | None, document_id: str, chunk_id: str) -> str:
    """A chunk's place in the order an entity's description takes its earliest mention from
    (created, document, index, id: as ``entity_graph/dirty_entities`` orders them), as a
    string that sorts the same (a missing number sorts last, as Cypher's nulls do)."""
    chunk = chunk or {}
    created, index = chunk.get("created_at"), chunk.get("chunk_index")
    return "\x01".join(
        (
            f"{created:020d}" if isinstance(created, int) and created >= 0 else "9" * 20,
            document_id,
            f"{index:010d}" if isinstance(index, int) and index >= 0 else "9" * 10,
            chunk_id,
        )
    )


def _unchanged(stored: dict[str, Any] | None, row: dict[str, Any], mentions: Sequence[tuple[str, str, int, int]]) -> bool:
    """Whether a chunk already holds exactly these links (a chunk never linked holds none,
    not empty ones)."""
    if stored is None or stored.get("pair_a") is None:
        return False
    # a chunk a new version of its document kept, but at another time or index, may now
    # come before or after the earliest mention of its entities: it is linked again
    if stored.get("moved"):
        return False
    keys = ("pair_a", "pair_b", "pair_strength", "pair_windows", "link_forms", "link_counts")
    if any(stored.get(k) is None or list(stored.get(k) or []) != row[k] for k in keys):
        return False
    # an entity is mentioned once per chunk: ordering by its id alone is total
    held = sorted(((m[0], m[1], m[2]) for m in stored.get("mentions") or []), key=lambda m: m[0])
    return held == sorted(((eid, count, first) for eid, _key, count, first in mentions), key=lambda m: m[0])


def _settle_entities(
    store: Any,
    embedder: EmbeddingProvider,
    options: MaintainOptions,
    result: MaintenanceResult,
    report: Progress,
    writes: _Writes,
) -> list[str]:
    """Update every dirty entity; returns the ids whose chunk count changed in a way that
    changes the ``references`` edges of their chunks."""
    touched: list[str] = []
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
                return touched
            passes += 1
            if passes >= 20:  # pragma: no cover - another ingest marked them twenty times over
                raise ConfigurationError("entities kept changing while being updated; run the build again")
            after, moved = "", 0
            continue
        after = page[-1]["id"]
        rows: list[dict[str, Any]] = []
        texts: list[str] = []
        embed_at: list[int] = []
        for r in page:
            df, old_df = int(r["df"]), int(r["old_df"])
            if _references_move(old_df, df, options.edge_max_chunks):
                touched.append(r["id"])
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
            }
            if r["maintained"] and df > 0 and ((name, description) != (r["name"], r["description"]) or not r["has_embedding"]):
                embed_at.append(len(rows))
                texts.append(
                    entity_embedding_text(
                        Entity(id=r["id"], name=name, type=type_, description=description, namespace=store.namespace)
                    )
                )
            rows.append(row)
        for start in range(0, len(texts), options.batch_size):
            vectors = embed_batched(embedder, texts[start : start + options.batch_size], batch_size=options.batch_size)
            for at, vector in zip(embed_at[start : start + options.batch_size], vectors):
                rows[at]["embedding"] = [float(x) for x in vector]
        # the next page is read and described while this one is written (pages go by id)
        updates.append(writes.submit(store.update_maintained_entities, rows))
        while len(updates) > 1 or (updates and updates[0].done()):
            moved += _count_update(updates.popleft(), result, report)


def _references_move(old_df: int, df: int, most: int) -> bool:
    """Whether an entity's new chunk count changes the ``references`` edges of chunks that
    were not linked again: it links its chunks while it is in 2 to ``most`` of them (with a
    weight from the count), so only a count that moved in or out of that range, or within
    it, does; and not for an entity that had none at its last update, since every chunk
    mentioning it now was linked again (and is marked already)."""
    if df == old_df or old_df == 0:
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
