"""Linking batches of documents, and of chunks marked to be linked again, against the
vocabulary (what ``maintain.maintain_entity_graph`` runs in its link stage): the vocabulary a
batch needs, the links it writes (only chunks whose links changed), and a document's link
context kept up to date chunk by chunk."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from typing import Any, Protocol

from ..errors import ConfigurationError
from ..types.entities import normalise_name
from .background import BackgroundWrites
from .chunk_links import title_name
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
from .names import display_name, maintained_entity_id, scan_chunk


class LinkCounts(Protocol):
    """Where a run counts what linking did (``maintain.MaintenanceResult``)."""

    documents: int
    chunks: int
    rewritten: int


__all__ = ["NAME_PAGE", "Linker", "Links", "document_batches", "name_id", "scan_batch", "whole_vocabulary"]

#: ``progress(stage, done, total)``; stages: scan, link, entities, references
Progress = Callable[[str, int, int], None]

DOCUMENT_PAGE = 2000
#: once a run has linked this many chunks, it links against the whole vocabulary held in
#: memory (one read of it, if it has at most ``VOCABULARY_IN_MEMORY`` names); before, each
#: batch looks up the names its text may contain. A read of the whole vocabulary grows with
#: the corpus, so an ingest of a few documents into a large namespace must not pay it.
WHOLE_VOCABULARY_AFTER = 5_000
#: and once it has linked a chunk for every this many names of the vocabulary: reading a large
#: vocabulary whole costs as much as looking up the names of many batches (a million chunks:
#: 226k names read and made into one automaton in 17.7 s, where an ingest of 100 documents
#: looked up the names of its 11,369 chunks in less)
NAMES_PER_CHUNK_LINKED = 10
#: the most vocabulary names a run holds at once (39,530 names held 23 MB, most in the automaton):
#: the whole vocabulary when it has no more, else the names the batches looked up, forgotten
#: when they come to more. Lower bounds cost large namespaces dearly: a batch then reads every
#: name under each of its words' first words again (a million chunks, 209k names: a bound of
#: 20,000 made the build more than twice as long)
VOCABULARY_IN_MEMORY = 300_000
#: chunks whose name scans are added per transaction
SCAN_ROWS = 1000
#: rounds of reading the other chunks a document's new link context concerns (each round's
#: chunks may concern more; a chain longer than this is not a document's)
_CONTEXT_ROUNDS = 20
#: most documents with marked chunks linked per transaction (and about batch_chunks chunks)
RELINK_PAGE = 200
#: documents with marked chunks read at once
RELINK_DOCUMENTS = 10_000
NAME_PAGE = 20_000


def name_id(namespace: str, key: str) -> str:
    """The id of a name's statistics node (``EntityName``), from its key."""
    return "name_" + maintained_entity_id(namespace, key)[4:]


def document_batches(store: Any, batch_chunks: int, *, every: bool = False) -> Iterator[list[dict[str, Any]]]:
    """The pending documents with their leaf chunks, about ``batch_chunks`` chunks a batch."""
    after = ""
    while True:
        ids = store.entity_pending_documents(after=after, limit=DOCUMENT_PAGE, every=every)
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
        # a short page is the last: at a million chunks each read of the pending documents
        # scans every document of the namespace
        if len(ids) < DOCUMENT_PAGE:
            return


def scan_batch(
    store: Any, batch: Sequence[dict[str, Any]], writes: BackgroundWrites | None = None, *, most: int = SCAN_ROWS
) -> None:
    """Add the name scans of ``batch``'s chunks not scanned yet (in the background with
    ``writes``), ``most`` chunks a transaction: one large document is a batch alone."""
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
                        {**s.row(), "id": name_id(store.namespace, s.key), "first": first_word(s.key), "words": key_words(s.key)}
                        for s in scan.names
                    ],
                }
            )
    for start in range(0, len(rows), most):
        part = rows[start : start + most]
        if writes is not None:
            writes.submit(store.apply_name_scans, part)
        else:
            store.apply_name_scans(part)


def vocabulary_name(row: dict[str, Any]) -> VocabularyName:
    return VocabularyName(row["key"], display_name(row["forms"], row["form_counts"]) or row["key"], tuple(row["forms"]))


def whole_vocabulary(store: Any) -> VocabularyMatcher | None:
    """The namespace's whole vocabulary as one matcher, or None when it is over
    ``VOCABULARY_IN_MEMORY`` names (then each batch looks its names up)."""
    names: dict[str, VocabularyName] = {}
    after = ""
    while True:
        page = store.vocabulary_page(after=after, limit=NAME_PAGE)
        for row in page:
            if row["accepted"]:
                names[row["key"]] = vocabulary_name(row)
        if len(names) > VOCABULARY_IN_MEMORY:
            return None
        if len(page) < NAME_PAGE:
            return VocabularyMatcher(names)
        after = page[-1]["key"]


class Linker:
    """Links pending documents as a whole (``link_pending``) and marked chunks alone
    (``relink_marked``), against the whole vocabulary once a run is large, else against the
    names each batch's words may start (``entity_graph/vocabulary_words``)."""

    def __init__(
        self, store: Any, options: LinkOptions, batch_chunks: int, result: LinkCounts, report: Progress, writes: BackgroundWrites
    ):
        self.store = store
        self.writes = writes
        self.options = options
        self.batch_chunks = batch_chunks
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
        self.held = 0  # names in by_word and by_key
        self.whole_after: int | None = None

    # -- the vocabulary a batch is linked against ------------------------------------------
    def matcher(self, generation: int | None, chunks: int, texts: Sequence[str], title_keys: Sequence[str]) -> VocabularyMatcher:
        """The vocabulary names ``texts`` can hold: the whole vocabulary once the run is large,
        else the names all of whose key's words the texts write, looked up by their first word
        (a word's names are remembered for the rest of the run, while the vocabulary stays at
        its generation: batches of one run share most words)."""
        linked = self.result.chunks + chunks
        # the vocabulary is counted only once the run passes the fixed bound
        if linked >= WHOLE_VOCABULARY_AFTER and linked >= self._whole_after():
            if self.whole is None or self.whole[0] != generation:
                self.whole = (generation, whole_vocabulary(self.store))
            if self.whole[1] is not None:
                return self.whole[1]
        if self.known_at != generation or self.held > VOCABULARY_IN_MEMORY:
            self.known_at, self.by_word, self.by_key, self.pool, self.held = generation, {}, {}, None, 0
        words = text_words(texts, self.words)
        missing = sorted(w for w in words if w not in self.by_word)
        if missing:
            for w in missing:
                self.by_word[w] = []
            for r in self.store.vocabulary_by_words(missing):
                self.by_word[r["first"]].append((tuple(r["words"] or key_words(r["key"])), vocabulary_name(r)))
                self.held += 1
        names = {n.key: n for w in words for need, n in self.by_word[w] if all(x in words for x in need)}
        keys = sorted({k for k in title_keys if k and k not in self.by_key})
        if keys:
            found = {r["key"]: vocabulary_name(r) for r in self.store.vocabulary_names(keys)}
            self.by_key.update({k: found.get(k) for k in keys})
            self.held += len(keys)
        for k in title_keys:
            name = self.by_key.get(k) if k else None
            if name is not None:
                names[k] = name
        # a superset gives the same links: the last batch's automaton serves again unless this
        # batch needs a name it lacks (then one of this batch's names is made: building one of
        # every name met so far, at each batch, costs their number each time)
        if self.pool is None or any(k not in self.pool.vocabulary for k in names):
            self.pool = VocabularyMatcher(names)
        return self.pool

    def _whole_after(self) -> int:
        """The chunks a run links before it reads the whole vocabulary (counted once a run)."""
        if self.whole_after is None:
            self.whole_after = self.store.vocabulary_size() // NAMES_PER_CHUNK_LINKED
        return self.whole_after

    def write(self, generation: int | None, links: Links) -> bool:
        """Write ``links`` about ``batch_chunks`` chunks a transaction; False when a part was
        refused (the vocabulary or a document moved: the batch is computed again, and the
        chunks a part wrote are taken back then)."""
        return all(self.store.write_entity_links(generation, part) for part in links.parts(self.batch_chunks))

    # -- pending documents, whole -----------------------------------------------------------
    def link_pending(self) -> int:
        """Link the pending documents as a whole, a batch at a time: each batch's links are
        written in the background while the next is computed; a write refused (the
        vocabulary or a document moved meanwhile: another ingest) is computed again. One
        pass: documents stored meanwhile are found by the caller's next round, which reads
        the pending documents again anyway (at a million chunks each read scans every
        document of the namespace)."""
        linked = 0
        written: deque[tuple[Future[Any], list[dict[str, Any]], Links]] = deque()
        for batch in document_batches(self.store, self.batch_chunks):
            # a document another ingest stored after this run's scan: its names count before
            # it is linked (linked, it would never be scanned)
            scan_batch(self.store, batch, most=self.batch_chunks)
            # read, not locked: the write in flight holds the graph's lock, and a stale
            # generation only has the write refused and computed again
            record = self.store.entity_graph_record()
            generation = record["generation"] if record else None
            links = Links(self.store.namespace)
            self.link_whole(links, batch, generation)
            written.append((self.writes.submit(self.write, generation, links), batch, links))
            while len(written) > 1:
                linked += self._settle(*written.popleft())
        while written:
            linked += self._settle(*written.popleft())
        return linked

    def _settle(self, future: Future[Any], batch: list[dict[str, Any]], links: Links) -> int:
        """Count a batch whose write was sent; one refused is linked again, in the foreground."""
        if not future.result():
            self.writes.drain()
            for _attempt in range(20):
                batch = self.store.entity_document_chunks([d["document_id"] for d in batch])
                generation = self.store.entity_graph_generation()
                links = Links(self.store.namespace)
                self.link_whole(links, batch, generation)
                if self.write(generation, links):
                    break
            else:  # pragma: no cover - twenty vocabulary changes during one batch
                raise ConfigurationError("the vocabulary kept changing while linking; run the build again")
        self.result.documents += len(batch)
        self.result.chunks += sum(len(d["chunks"]) for d in batch)
        self.result.rewritten += links.rewritten
        self.report("link", self.result.chunks, 0)
        return len(batch)

    def link_whole(self, links: Links, batch: Sequence[dict[str, Any]], generation: int | None) -> None:
        """Link documents as a whole into ``links``."""
        if not batch:
            return
        titles = [normalise_name(title_name(d["title"])) for d in batch]
        texts = [c["content"] or "" for d in batch for c in d["chunks"]]
        matcher = self.matcher(generation, len(texts), texts, titles)
        for d, title_key in zip(batch, titles):
            chunks = d["chunks"]
            matches = [matcher.gazetteer.find(c["content"] or "") for c in chunks]
            forms = [chunk_forms(found) for found in matches]
            document_forms = sum_forms(forms)
            context = document_context(document_forms)
            for i, (c, found, share) in enumerate(zip(chunks, matches, forms)):
                self._link(links, d["document_id"], c, found, share, matcher, context, title_key if i == 0 else "")
            links.document(d, document_forms, whole=True, settled=[c["id"] for c in chunks if c.get("relink")])

    def _link(
        self,
        links: Links,
        document_id: str,
        chunk: dict[str, Any],
        found: Any,
        share: dict[str, tuple[int, int]],
        matcher: VocabularyMatcher,
        context: LinkContext,
        title_key: str,
    ) -> None:
        """Link one chunk in its document's ``context`` into ``links``."""
        content = chunk["content"] or ""
        link = link_chunk(
            self.store.namespace,
            chunk["id"],
            content,
            found,
            matcher,
            context,
            title_key=title_key,
            options=self.options,
            forms=share,
        )
        links.add(link, chunk, document_id, names=matcher.vocabulary)

    # -- marked chunks, alone -----------------------------------------------------------------
    def relink_marked(self) -> int:
        """Link the chunks marked to be linked again, a page of documents at a time (each
        page's links written in the background while the next is computed; one refused is
        computed again); a document to be linked as a whole anyway (a new version, or one that
        keeps no link context) is linked so here. A page holds about ``batch_chunks`` marked
        chunks: a document with more is linked that many at a time, each part read once the
        part before is written. Returns the documents linked."""
        linked = 0
        after = ""
        written: deque[tuple[Future[Any], list[str], Links, int]] = deque()
        part: tuple[str, int] | None = None  # the document linked in parts, and its marks left then
        # the documents with marks, read RELINK_DOCUMENTS at a time (each read counts every
        # mark of the namespace) and taken about batch_chunks marked chunks at a time
        page: list[dict[str, Any]] = []
        at = 0
        while True:
            if at >= len(page):
                page, at = self.store.relink_documents(after=after, limit=RELINK_DOCUMENTS), 0
                if not page:
                    break
            ids: list[str] = []
            size = 0
            while at < len(page) and len(ids) < RELINK_PAGE:
                ids.append(page[at]["id"])
                size += int(page[at]["chunks"])
                at += 1
                if size >= self.batch_chunks:
                    break
            # a document with more marked chunks than a page takes is read again for the rest
            # once this part is written (its forms and marks move with it)
            last = (ids[-1], int(page[at - 1]["chunks"]))
            # (a part that left its marks, another ingest's, is not read again and again)
            rest = last[1] > self.batch_chunks and not (part is not None and part[0] == last[0] and part[1] <= last[1])
            part = last if rest else None
            if not rest:
                after = ids[-1]
            else:
                if len(ids) > 1:
                    after = ids[-2]
                page, at = [], 0  # read again from there once this part is written
            record = self.store.entity_graph_record()  # read: the write in flight holds the lock
            generation = record["generation"] if record else None
            documents = self.store.relink_chunks(ids, limit=self.batch_chunks)
            links = Links(self.store.namespace)
            chunks = self.relink(links, documents, generation)
            written.append((self.writes.submit(self.write, generation, links), ids, links, chunks))
            while len(written) > (0 if rest else 1):
                linked += self._settle_relink(*written.popleft())
        while written:
            linked += self._settle_relink(*written.popleft())
        return linked

    def _settle_relink(self, future: Future[Any], ids: list[str], links: Links, chunks: int) -> int:
        """Count a page of marked chunks whose write was sent; one refused is linked again,
        in the foreground."""
        if not future.result():
            self.writes.drain()
            for _attempt in range(20):
                generation = self.store.entity_graph_generation()
                documents = self.store.relink_chunks(ids, limit=self.batch_chunks)
                links = Links(self.store.namespace)
                chunks = self.relink(links, documents, generation)
                if self.write(generation, links):
                    break
            else:  # pragma: no cover - twenty vocabulary changes during one batch
                raise ConfigurationError("the vocabulary kept changing while linking; run the build again")
        self.result.chunks += chunks
        self.result.rewritten += links.rewritten
        self.report("link", self.result.chunks, 0)
        return len(ids)

    def relink(self, links: Links, documents: Sequence[dict[str, Any]], generation: int | None) -> int:
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
        plans: list[tuple[dict[str, Any], list[Any], list[dict[str, tuple[int, int]]], DocumentForms]] = []
        for d in partial:
            now = _document_forms(d["link_forms"], d["link_counts"])
            matches = [matcher.gazetteer.find(c["content"] or "") for c in d["chunks"]]
            shares = [chunk_forms(found) for found in matches]
            for c, share in zip(d["chunks"], shares):
                add_forms(now, _chunk_share(c), -1)
                add_forms(now, share, 1)
            plans.append((d, matches, shares, now))
        extra, contexts, matcher = self._context(plans, matcher, generation, texts, titles)
        for d, matches, shares, now in plans:
            context = contexts[d["document_id"]]
            title_key = normalise_name(title_name(d["title"]))
            work = [(c, found, share) for c, found, share in zip(d["chunks"], matches, shares)]
            work += extra.get(d["document_id"], [])
            for c, found, share in work:
                self._link(
                    links, d["document_id"], c, found, share, matcher, context, title_key if c["id"] == d["first_chunk"] else ""
                )
            links.document(d, now, whole=False, settled=[c["id"] for c in d["chunks"]])
            count += len(work)
        return count

    def _context(
        self,
        plans: Sequence[tuple[dict[str, Any], list[Any], list[dict[str, tuple[int, int]]], DocumentForms]],
        matcher: VocabularyMatcher,
        generation: int | None,
        texts: list[str],
        titles: list[str],
    ) -> tuple[
        dict[str, list[tuple[dict[str, Any], list[Any], dict[str, tuple[int, int]]]]], dict[str, LinkContext], VocabularyMatcher
    ]:
        """The other chunks of the documents whose names count or resolve differently in the
        documents' new contexts, with their matches and forms now: each one's new share of the
        forms replaces its old one in its document's forms (``plans``' last item, updated in
        place), which may change the context again, until no other chunk is concerned. Returns
        them by document, each document's new context, and a matcher of the vocabulary they
        all need."""
        extra: dict[str, list[tuple[dict[str, Any], list[Any], dict[str, tuple[int, int]]]]] = {}
        seen: set[str] = set()
        more: list[str] = []
        forms_of = {d["document_id"]: now for d, _, _, now in plans}
        kept = {d["document_id"]: _document_forms(d["link_forms"], d["link_counts"]) for d, _, _, _ in plans}
        kept_context = {k: document_context(forms) for k, forms in kept.items()}
        contexts: dict[str, LinkContext] = {}
        # only a document whose forms moved in the last round can concern more of its chunks:
        # the others asked for the same forms then, and got every chunk writing them
        moved = set(forms_of)
        for _round in range(_CONTEXT_ROUNDS):
            wanted = []
            for d, _, _, now in plans:
                document_id = d["document_id"]
                if document_id not in moved:
                    continue
                contexts[document_id] = document_context(now)
                changed = kept_context[document_id].changed_keys(contexts[document_id])
                forms = sorted(f for f in set(kept[document_id]) | set(now) if form_key(f) in changed)
                if forms:
                    wanted.append({"id": document_id, "forms": forms})
            rows = self.store.context_chunks(wanted) if wanted else []
            new = [(r["document_id"], c) for r in rows for c in r["chunks"] if c["id"] not in seen]
            if not new:
                return extra, contexts, matcher
            more += [c["content"] or "" for _, c in new]
            matcher = self.matcher(generation, len(texts) + len(more), texts + more, titles)
            moved = set()
            for document_id, c in new:
                seen.add(c["id"])
                found = matcher.gazetteer.find(c["content"] or "")
                share = chunk_forms(found)
                add_forms(forms_of[document_id], _chunk_share(c), -1)
                add_forms(forms_of[document_id], share, 1)
                extra.setdefault(document_id, []).append((c, found, share))
                moved.add(document_id)
        raise ConfigurationError("a document's link context kept changing while linking; run the build again")


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


class Links:
    """What a batch of links writes (``entity_graph/write_links``'s parameters): only the
    chunks whose links differ from what they hold."""

    def __init__(self, namespace: str):
        self.namespace = namespace
        self.entities: dict[str, tuple[str, str]] = {}  # entity -> (key, display name)
        self.earliest: dict[str, tuple[str, str]] = {}  # entity -> (place, chunk) of its earliest mention here
        self.mentions: list[dict[str, Any]] = []
        # what each chunk adds to the co-occurrence sums: all its pairs when its old links are
        # taken back first, else the difference from what it holds (negative where it lost some)
        self.pair_rows: dict[str, list[tuple[str, str, int, int]]] = {}
        self.chunks: list[dict[str, Any]] = []
        self.held: list[str] = []  # chunks written whose old links are taken back first
        self.dropped: list[dict[str, str]] = []  # mentions a chunk written by difference no longer has
        # chunk -> the count of link writes its difference was taken from (checked when written)
        self.bases: dict[str, int] = {}
        self.documents: list[dict[str, Any]] = []
        self.settled: list[str] = []

    @property
    def rewritten(self) -> int:
        return len(self.chunks)

    def add(
        self,
        link: ChunkLinks,
        stored: dict[str, Any] | None,
        document_id: str,
        *,
        names: Mapping[str, VocabularyName],
    ) -> None:
        """Add a chunk's links; ``names``: the vocabulary it was linked against, whose display
        names a new entity is created with (the name its update gives it, unless its forms
        move meanwhile: its co-occurrences are described with it as they are written)."""
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
        # only those that differ from what the chunk holds are written
        if _unchanged(stored, row, chunk_mentions):
            return
        place = _place(stored, document_id, link.chunk_id)
        if stored is not None and _by_difference(stored):
            # a chunk that gains a name keeps most of its links: only what changed is written
            # (the entities whose mention came, went or moved are the ones marked)
            before = {str(m[0]): (m[1], m[2]) for m in stored["mentions"]}
            now = {eid for eid, *_ in chunk_mentions}
            self.dropped += [{"chunk_id": link.chunk_id, "entity_id": eid} for eid in sorted(before) if eid not in now]
            chunk_mentions = [m for m in chunk_mentions if before.get(m[0]) != (m[2], m[3])]
            self.pair_rows[link.chunk_id] = _pair_difference(stored, ordered)
            self.bases[link.chunk_id] = int(stored.get("links_written") or 0)
        else:
            if stored is None or stored.get("pair_a") is not None or stored.get("mentions"):
                self.held.append(link.chunk_id)
            self.pair_rows[link.chunk_id] = [(a, b, v[0], v[1]) for (a, b), v in ordered]
        for eid, key, count, first in chunk_mentions:
            known = names.get(key)
            self.entities[eid] = (key, known.display if known else key)
            if eid not in self.earliest or place < self.earliest[eid][0]:
                self.earliest[eid] = (place, link.chunk_id)
            self.mentions.append({"chunk_id": link.chunk_id, "entity_id": eid, "count": count, "first": first})
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

    def parts(self, most: int) -> list[dict[str, Any]]:
        """The parameters in parts of at most ``most`` chunks, one transaction each (one large
        document is a batch alone): each part the mentions, entities and co-occurrence sums of
        its chunks; the documents' forms, and the marks handled, go with the last part, and
        every part checks that no document moved since it was read (``check``)."""
        whole = self.params()
        if len(self.chunks) <= most:
            return [whole]
        out = []
        for start in range(0, len(self.chunks), most):
            rows = self.chunks[start : start + most]
            ids = {r["chunk_id"] for r in rows}
            mentions = [m for m in self.mentions if m["chunk_id"] in ids]
            mentioned = {m["entity_id"] for m in mentions}
            last = start + most >= len(self.chunks)
            out.append(
                {
                    "entities": [e for e in whole["entities"] if e["id"] in mentioned],
                    "mentions": mentions,
                    "dropped": [m for m in self.dropped if m["chunk_id"] in ids],
                    "bases": {c: n for c, n in self.bases.items() if c in ids},
                    "pairs": self._pairs(r["chunk_id"] for r in rows),
                    "chunks": rows,
                    "unlink": [c for c in self.held if c in ids],
                    "documents": self.documents if last else [],
                    "check": self.documents,
                    "settled": self.settled if last else [],
                }
            )
        return out

    def _pairs(self, chunk_ids: Iterable[str]) -> list[dict[str, Any]]:
        """The co-occurrence sums the chunks add, once per pair (those that add nothing left out)."""
        total: dict[tuple[str, str], list[int]] = {}
        for chunk_id in chunk_ids:
            for a, b, strength, windows in self.pair_rows[chunk_id]:
                v = total.setdefault((a, b), [0, 0])
                v[0] += strength
                v[1] += windows
        return [{"a": a, "b": b, "strength": v[0], "windows": v[1]} for (a, b), v in sorted(total.items()) if v != [0, 0]]

    def params(self) -> dict[str, Any]:
        return {
            "entities": [
                {
                    "id": e,
                    "key": self.entities[e][0],
                    "name": self.entities[e][1],
                    "place": self.earliest[e][0],
                    "source": self.earliest[e][1],
                }
                for e in sorted(self.entities)
            ],
            "mentions": self.mentions,
            "dropped": self.dropped,
            "bases": dict(self.bases),
            "pairs": self._pairs(r["chunk_id"] for r in self.chunks),
            "chunks": self.chunks,
            "unlink": self.held,
            "documents": self.documents,
            "settled": self.settled,
        }


#: added to the numbers of a chunk's place, so that negative ones sort first as in Cypher
_OFFSET = 2**62


def _place(chunk: dict[str, Any] | None, document_id: str, chunk_id: str) -> str:
    """A chunk's place in the order an entity's description takes its earliest mention from
    (created, document, index, id: as ``entity_graph/dirty_entities`` orders them), as a
    string that sorts the same (a missing number sorts last, as Cypher's nulls do)."""
    chunk = chunk or {}
    created, index = chunk.get("created_at"), chunk.get("chunk_index")
    return "\x01".join(
        (
            f"{created + _OFFSET:020d}" if isinstance(created, int) and abs(created) < _OFFSET else "9" * 20,
            document_id,
            f"{index + _OFFSET:020d}" if isinstance(index, int) and abs(index) < _OFFSET else "9" * 20,
            chunk_id,
        )
    )


def _by_difference(stored: dict[str, Any]) -> bool:
    """Whether a chunk's new links are written as the difference from those it holds: it was
    linked (its mentions and co-occurrences read with it) and stands where it stood, so its
    unchanged mentions cannot move any entity's earliest mention."""
    return stored.get("pair_a") is not None and "mentions" in stored and not stored.get("moved")


def _pair_difference(
    stored: dict[str, Any], ordered: Sequence[tuple[tuple[str, str], tuple[int, int]]]
) -> list[tuple[str, str, int, int]]:
    """What a chunk's co-occurrences ``ordered`` add to the sums beyond what it added before."""
    diff: dict[tuple[str, str], list[int]] = {}
    for a, b, strength, windows in zip(stored["pair_a"], stored["pair_b"], stored["pair_strength"], stored["pair_windows"]):
        v = diff.setdefault((a, b), [0, 0])
        v[0] -= int(strength)
        v[1] -= int(windows)
    for pair, (strength, windows) in ordered:
        v = diff.setdefault(pair, [0, 0])
        v[0] += strength
        v[1] += windows
    return [(a, b, v[0], v[1]) for (a, b), v in sorted(diff.items()) if v != [0, 0]]


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
