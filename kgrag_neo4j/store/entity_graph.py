"""The maintained entity graph's capability of Neo4jStore: the reads and transactions that
keep a namespace's entity graph current as documents come and go.

Every transaction that changes the graph starts with ``entity_graph/lock``: it takes the
write lock of the namespace's graph record, so concurrent ingests change it one transaction
at a time, and it returns the vocabulary generation, which lets a link computed against an
older vocabulary be refused and computed again. What to write is decided in
``kgrag_neo4j.entities.maintain`` (pure functions and the orchestration); this module only
runs statements.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .runner import CypherRunner, TxRunner

if TYPE_CHECKING:
    from .schema import VectorSlot

__all__ = ["EntityGraphMixin"]

PAGE = 1000


class EntityGraphMixin:
    runner: CypherRunner
    namespace: str

    if TYPE_CHECKING:  # defined by SchemaMixin

        def vector_slot(self) -> VectorSlot: ...

    @staticmethod
    def _locked(tx: TxRunner, namespace: str) -> int | None:
        rows = tx.run("entity_graph/lock", namespace=namespace)
        return int(rows[0]["generation"]) if rows else None

    # -- reads ----------------------------------------------------------------------------
    def entity_graph_state(self) -> dict[str, Any]:
        """Counts of how current the namespace's entity graph is (``kgrag entities status``)."""
        return dict(self.runner.read("entity_graph/state", namespace=self.namespace)[0])

    def entity_unlinked_documents(self, *, limit: int = 1000) -> int:
        """Documents (counted up to ``limit``) the maintained entity graph has not linked since
        their last change; 0 without one."""
        rows = self.runner.read("entity_graph/unlinked_documents", namespace=self.namespace, limit=limit)
        return int(rows[0]["unlinked"]) if rows else 0

    def has_linked_documents(self) -> bool:
        return bool(self.runner.read("entity_graph/has_linked_documents", namespace=self.namespace)[0]["linked"])

    def entity_pending_documents(self, *, after: str = "", limit: int = PAGE, every: bool = False) -> list[str]:
        rows = self.runner.read("entity_graph/pending_documents", namespace=self.namespace, after=after, limit=limit, all=every)
        return [r["id"] for r in rows]

    def entity_document_chunks(self, document_ids: Sequence[str]) -> list[dict[str, Any]]:
        return self.runner.read("entity_graph/document_chunks", namespace=self.namespace, document_ids=list(document_ids))

    def vocabulary_names(self, keys: Sequence[str]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        keys = list(keys)
        for start in range(0, len(keys), 20_000):
            out += self.runner.read("entity_graph/vocabulary", namespace=self.namespace, keys=keys[start : start + 20_000])
        return out

    def vocabulary_page(self, *, after: str = "", limit: int = 20_000) -> list[dict[str, Any]]:
        return self.runner.read("entity_graph/vocabulary_page", namespace=self.namespace, after=after, limit=limit)

    def vocabulary_size(self) -> int:
        """The names the namespace has recorded (an upper bound of its vocabulary)."""
        return int(self.runner.read("entity_graph/vocabulary_size", namespace=self.namespace)[0]["names"])

    def chunk_texts(self, chunk_ids: Sequence[str]) -> dict[str, str]:
        """The text of the namespace's chunks among ``chunk_ids``, by id."""
        rows = self.runner.read("entity_graph/chunk_texts", namespace=self.namespace, chunk_ids=list(chunk_ids))
        return {r["id"]: r["content"] or "" for r in rows}

    def changed_names(self, *, limit: int = PAGE) -> list[dict[str, Any]]:
        return self.runner.read("entity_graph/changed_names", namespace=self.namespace, limit=limit)

    def chunks_writing(
        self, names: Sequence[str], keys: Sequence[str], *, words: Sequence[str] = (), limit: int = 100_000
    ) -> list[tuple[str, str]]:
        """Linked chunks, as (document id, chunk id), that may write one of ``names`` (a
        full-text phrase match, a superset), that write one of the one-word ``words`` in a
        document where one chunk writes it capitalised, or that mention the entity of one of
        ``keys``. A full-text query that returns ``limit`` hits is run again with four times
        the limit, until it returns fewer: none is cut off."""
        namespace = namespace_phrase(self.namespace)
        # a name the index keeps only the words of ("C--" is "c" there) is asked alone, and
        # only its hits that write it as it is written are kept
        literal = {n: literal_form(n) for n in names}
        phrases = list(dict.fromkeys(p for n in names if not literal[n] for p in name_phrases(n)))
        partial = sorted({f for f in literal.values() if f})
        plain = sorted({w for w in words if w.isascii() and w.isalnum() and w == w.lower() and len(w) > 1})
        out: set[tuple[str, str]] = set()
        if phrases or plain or partial:
            self.runner.read("entity_graph/await_names_index")
        # Lucene refuses more than 1024 clauses; a phrase is one
        for start in range(0, max(len(phrases), len(plain), len(partial), 1), 300):
            part = phrases[start : start + 300]
            query = names_lucene_query(part, namespace)
            literals = [
                {"query": names_lucene_query(name_phrases(f), namespace), "literal": f} for f in partial[start : start + 300]
            ]
            some = [
                {
                    "query": names_lucene_query([f'"{w}"'], namespace),
                    "pattern": capitalised_pattern([w]),
                    "starts": capitalised_starts(w),
                }
                for w in plain[start : start + 300]
            ]
            mentioned = list(keys) if start == 0 else []
            most = limit
            while query or some or literals or mentioned:
                row = self.runner.read(
                    "entity_graph/chunks_writing",
                    namespace=self.namespace,
                    query=query,
                    keys=mentioned,
                    words=some,
                    literals=literals,
                    limit=most,
                )[0]
                out.update((d, c) for d, c in row["chunks"])
                # a query that filled its limit may have more hits: again with a larger one
                query = query if row["hits"] >= most else ""
                some = some if row["word_hits"] >= most else []
                literals = literals if row["literal_hits"] >= most else []
                mentioned, most = [], most * 4
        return sorted(out)

    def relink_documents(self, *, after: str = "", limit: int = PAGE) -> list[dict[str, Any]]:
        """Documents with chunks marked to be linked again, a page of them by id: ``{id,
        chunks}`` (how many it has marked)."""
        return self.runner.read("entity_graph/relink_documents", namespace=self.namespace, after=after, limit=limit)

    def relink_chunks(self, document_ids: Sequence[str], *, limit: int = 1_000_000) -> list[dict[str, Any]]:
        """The documents with their first ``limit`` marked chunks (``entity_graph/relink_chunks``)."""
        return self.runner.read(
            "entity_graph/relink_chunks", namespace=self.namespace, document_ids=list(document_ids), limit=limit
        )

    def context_chunks(self, documents: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        return self.runner.read("entity_graph/context_chunks", namespace=self.namespace, documents=list(documents))

    def entity_graph_record(self) -> dict[str, Any] | None:
        """The namespace's entity graph record (generation, ``name_words``, ``name_scanned``), None
        without one."""
        rows = self.runner.read("entity_graph/graph_record", namespace=self.namespace)
        return dict(rows[0]) if rows else None

    def names_without_words(self, *, after: str = "", limit: int = 20_000) -> list[dict[str, Any]]:
        return self.runner.read("entity_graph/names_without_words", namespace=self.namespace, after=after, limit=limit)

    def set_name_words(self, rows: Sequence[Mapping[str, str]], *, done: bool) -> int:
        return int(
            self.runner.write("entity_graph/set_name_words", namespace=self.namespace, rows=list(rows), done=done)[0]["named"]
        )

    def label_scanned_chunks(self, *, limit: int = 10_000) -> int:
        """Label for the chunk_names index up to ``limit`` chunks an older version scanned; a
        page that comes back short records on the graph that none is left."""
        return int(self.runner.write("entity_graph/label_scanned", namespace=self.namespace, limit=limit)[0]["labelled"])

    def vocabulary_by_words(self, words: Sequence[str]) -> list[dict[str, Any]]:
        """The vocabulary names whose key starts with one of ``words`` (each row says which:
        ``first``), with the words of their key."""
        out: list[dict[str, Any]] = []
        words = list(words)
        for start in range(0, len(words), 20_000):
            out += self.runner.read(
                "entity_graph/vocabulary_words", namespace=self.namespace, words=words[start : start + 20_000]
            )
        return out

    def dirty_entities(self, *, after: str = "", limit: int = 500) -> list[dict[str, Any]]:
        return self.runner.read(
            "entity_graph/dirty_entities",
            namespace=self.namespace,
            after=after,
            limit=limit,
            vector_property=self.vector_slot().vector_property,
        )

    def dirty_chunks(self, *, limit: int = PAGE) -> list[str]:
        rows = self.runner.read("entity_graph/dirty_chunks", namespace=self.namespace, limit=limit)
        return [r["id"] for r in rows]

    # -- transactions -----------------------------------------------------------------------
    def apply_name_scans(self, rows: Sequence[Mapping[str, Any]]) -> dict[str, int]:
        """Add chunks' name scans to the name statistics, in one transaction."""

        def work(tx: TxRunner) -> dict[str, int]:
            self._locked(tx, self.namespace)
            return dict(tx.run("entity_graph/apply_scans", namespace=self.namespace, rows=list(rows))[0])

        return self.runner.write_fn(work)

    def write_entity_links(self, generation: int, links: Mapping[str, Any]) -> bool:
        """Replace the links of the chunks in ``links["chunks"]`` (of ``links["documents"]``; those
        in ``links["unlink"]`` hold links to take back first) by ``links`` (the parameters of
        ``entity_graph/write_links``) in one transaction, if the
        vocabulary is still at ``generation``, no document's links or content moved since
        they were read (``links_version``, ``content_hash``) and every chunk written as a
        difference (``links["bases"]``: chunk -> its count of link writes then) still holds
        the links it was taken from; else nothing is written: False."""
        documents = links["documents"]
        # a part of a large document's links checks the document it does not write yet
        checked = links.get("check", documents)

        def work(tx: TxRunner) -> bool:
            if self._locked(tx, self.namespace) != generation:
                return False
            # a chunk written as a difference must still hold the links it was taken from
            bases = links.get("bases") or {}
            (versions,) = tx.run(
                "entity_graph/link_versions",
                namespace=self.namespace,
                document_ids=[d["id"] for d in checked],
                chunk_ids=sorted(bases),
            )
            now = {r["id"]: (r["content_hash"], r["links_version"]) for r in versions["documents"]}
            if any(now.get(d["id"]) != (d["content_hash"], d["links_version"]) for d in checked):
                return False
            written = {r["id"]: r["links_written"] for r in versions["chunks"]}
            if any(written.get(c) != n for c, n in bases.items()):
                return False
            if links["unlink"]:
                unlinked = set(links["unlink"])
                kept: dict[str, list[str]] = {}
                for m in links["mentions"]:
                    if m["chunk_id"] in unlinked:
                        kept.setdefault(m["chunk_id"], []).append(m["entity_id"])
                tx.run(
                    "entity_graph/unlink_chunks",
                    namespace=self.namespace,
                    document_ids=[d["id"] for d in checked],
                    stale_only=False,
                    chunk_ids=list(links["unlink"]),
                    forget_scan=False,
                    limit=None,
                    kept=kept,
                )
            tx.run(
                "entity_graph/write_links",
                namespace=self.namespace,
                entities=links["entities"],
                mentions=links["mentions"],
                dropped=list(links.get("dropped", ())),
                pairs=links["pairs"],
                chunks=links["chunks"],
                documents=links["documents"],
                settled=list(links.get("settled", ())),
            )
            return True

        return bool(self.runner.write_fn(work))

    def entity_graph_generation(self) -> int | None:
        """The vocabulary generation (None: the namespace has no maintained entity graph)."""
        return self.runner.write_fn(lambda tx: self._locked(tx, self.namespace))

    def mark_documents_pending(self, document_ids: Sequence[str]) -> int:
        """Mark documents to be linked again as a whole."""

        def work(tx: TxRunner) -> int:
            self._locked(tx, self.namespace)
            return int(
                tx.run("entity_graph/mark_documents", namespace=self.namespace, document_ids=list(document_ids))[0]["documents"]
            )

        return self.runner.write_fn(work)

    def mark_chunks_relink(self, chunk_ids: Sequence[str], names: Sequence[Mapping[str, Any]]) -> dict[str, int]:
        """Mark linked chunks to be linked again (their documents as a whole, when those keep
        no link context), and forget the handled marks of ``names`` (``{key, marked}``: a name
        marked again since is left marked)."""

        def work(tx: TxRunner) -> dict[str, int]:
            self._locked(tx, self.namespace)
            return dict(
                tx.run("entity_graph/mark_relink", namespace=self.namespace, chunk_ids=list(chunk_ids), names=list(names))[0]
            )

        return self.runner.write_fn(work)

    def update_maintained_entities(self, rows: Sequence[Mapping[str, Any]]) -> dict[str, int]:
        prop = self.vector_slot().vector_property  # the namespace's model's property

        def work(tx: TxRunner) -> dict[str, int]:
            self._locked(tx, self.namespace)
            return dict(
                tx.run("entity_graph/update_entities", namespace=self.namespace, rows=list(rows), vector_property=prop)[0]
            )

        return self.runner.write_fn(work)

    def settle_relations(self, *, limit: int = 5000) -> int:
        total = 0
        while True:

            def work(tx: TxRunner) -> int:
                self._locked(tx, self.namespace)
                return int(tx.run("entity_graph/settle_relations", namespace=self.namespace, limit=limit)[0]["settled"])

            done = self.runner.write_fn(work)
            total += done
            if done < limit:
                return total

    def update_references(
        self,
        chunk_ids: Sequence[str],
        *,
        max_chunks: int,
        unit: int,
        decide: Callable[[list[dict[str, Any]]], tuple[list[dict[str, Any]], list[dict[str, str]]]],
    ) -> int:
        """Read the chunks' reference candidates and edges and write what ``decide`` (pure)
        makes of them, in one transaction; returns the edges written."""

        def work(tx: TxRunner) -> int:
            self._locked(tx, self.namespace)
            found = tx.run(
                "entity_graph/reference_candidates",
                namespace=self.namespace,
                chunk_ids=list(chunk_ids),
                max_chunks=max_chunks,
                unit=unit,
            )
            rows, drop = decide(found)
            return int(
                tx.run(
                    "entity_graph/write_references", namespace=self.namespace, rows=rows, drop=drop, chunk_ids=list(chunk_ids)
                )[0]["written"]
            )

        return self.runner.write_fn(work)

    def record_entity_build(self, at: str, names: Sequence[Mapping[str, Any]] = ()) -> int:
        return int(
            self.runner.write("entity_graph/record_build", namespace=self.namespace, at=at, names=list(names))[0]["generation"]
        )

    def clear_entity_graph(self, *, batch_size: int = 10_000) -> int:
        """Remove the namespace's entity graph (triples and their entities stay), in bounded
        transactions: its chunks a page at a time in id order (a fifth of ``batch_size``
        chunks: each brings its mentions), then the rest."""
        total = 0
        after = ""
        while True:
            # one page: write_batches runs it again smaller if it outgrew the transaction memory
            rows = next(
                self.runner.write_batches(
                    "entity_graph/clear_chunks", namespace=self.namespace, after=after, batch_size=max(1, batch_size // 5)
                )
            )
            if not rows[0]["chunks"]:
                break
            total += int(rows[0]["removed"])
            after = rows[0]["last"]
        for rows in self.runner.write_batches("entity_graph/clear", namespace=self.namespace, batch_size=batch_size):
            removed = int(rows[0]["removed"])
            if not removed:
                break
            total += removed
        return total

    def unlink_documents(self, tx: TxRunner, document_ids: Sequence[str], *, stale_only: bool, limit: int | None = None) -> int:
        """Inside a document write or delete: take back what the chunks about to be deleted
        contributed to the entity graph (nothing when the namespace has none); with ``limit``,
        at most that many chunks' co-occurrences and scans. Returns the chunks unlinked."""
        if document_ids and self._locked(tx, self.namespace) is not None:
            return int(
                tx.run(
                    "entity_graph/unlink_chunks",
                    namespace=self.namespace,
                    document_ids=list(document_ids),
                    stale_only=stale_only,
                    chunk_ids=None,
                    forget_scan=True,
                    limit=limit,
                    kept={},
                )[0]["chunks"]
            )
        return 0


def capitalised_pattern(words: Sequence[str]) -> str:
    """A regular expression (Java's, for Cypher's ``=~``) that a text matches when it writes
    one of ``words`` (lower-case ASCII letters and digits) as a whole word whose first
    character is upper case, the rest in any case: where the gazetteer would find it
    capitalised. The Kelvin sign is the one other character whose lower case is an ASCII
    letter."""
    if not words:
        return ""
    alternatives = [f"[{_capitals(w[0])}](?iu:{w[1:]})" for w in words]
    return "(?s).*(?<![\\p{L}\\p{N}])(?:" + "|".join(alternatives) + ")(?![\\p{L}\\p{N}]).*"


#: the characters other than its own two cases that Java's case-insensitive Unicode match
#: takes for an ASCII letter (a superset does no harm: it only costs a regular expression)
_CASE_FELLOWS = {"i": "\u0130\u0131", "k": "\u212a", "s": "\u017f"}


def capitalised_starts(word: str) -> list[str]:
    """The two-character beginnings one of which a text writing ``word`` (two or more
    lower-case ASCII letters and digits) as :func:`capitalised_pattern` finds it must
    contain: a substring test rules most texts out before the regular expression, whose
    every character costs a step."""
    second = {word[1], word[1].upper(), *_CASE_FELLOWS.get(word[1], "")}
    return sorted(a + b for a in _capitals(word[0]) for b in second)


def _capitals(letter: str) -> str:
    """The characters a capitalised word may begin with for a lower-case ASCII ``letter``: its
    upper case, and the Kelvin sign for k (the one other character whose lower case is ASCII)."""
    return letter.upper() + ("\u212a" if letter == "k" else "")


def literal_form(name: str) -> str:
    """The form the entity linker finds ``name`` as (NFKC, lower case), when the
    ``chunk_names`` index keeps only part of it ("c--", "node.js": letters and digits with
    other characters) and a chunk writing it must contain it in some case: ASCII without
    whitespace, where lower-casing a text keeps every match (the one character outside ASCII
    whose lower case is in it, the Kelvin sign, lower-cases to "k" on the server too); else
    ""."""
    form = unicodedata.normalize("NFKC", name).strip().lower()
    if not form.isascii() or any(ch.isspace() for ch in form) or form.isalnum():
        return ""
    return form if any(ch.isalpha() for ch in form) else ""


def name_phrases(name: str) -> list[str]:
    """The quoted phrases of a Lucene query over ``chunk_names`` that find every chunk writing
    ``name`` as the gazetteer finds it: its words (runs of letters and digits; the index splits
    further), as written, in capitals and in lower case (Python's and Java's case mappings
    differ on a few letters, the final sigma among them), and the same of its NFKC form."""
    out = []
    # the gazetteer matches a name's NFKC form ("ﬁ" is "fi" there), in any case
    normal = unicodedata.normalize("NFKC", name)
    for variant in (name, name.upper(), name.lower(), normal, normal.upper(), normal.lower()):
        words = " ".join(_WORDS.findall(variant))
        if words and any(ch.isalpha() for ch in words):
            out.append(f'"{words}"')
    return list(dict.fromkeys(out))


def namespace_phrase(namespace: str) -> str:
    """The namespace as a phrase of ``chunk_names``' namespace field, or "" when the index
    keeps no word of it (letters only count there): the Cypher filter decides in any case."""
    words = " ".join(_WORDS.findall(namespace))
    return f'"{words}"' if any(ch.isalpha() for ch in words) else ""


def names_lucene_query(phrases: Sequence[str], namespace: str) -> str:
    """A query over ``chunk_names`` for any of ``phrases`` (from :func:`name_phrases`), limited
    to a namespace phrase (boost 0, so it only filters); "" for no phrase."""
    if not phrases:
        return ""
    terms = f"content:({' OR '.join(phrases)})"
    return f"+namespace:{namespace}^0 +{terms}" if namespace else terms


_WORDS = re.compile(r"[^\W_]+")
