"""The maintained entity graph on the real server: every ingest, replace and delete keeps it
current, and after any sequence of them it equals what a build from scratch makes of the
same documents (a randomized comparison of canonical dumps)."""

from __future__ import annotations

import random

import pytest

from kgrag_neo4j.entities.chunk_links import entity_chunk_edges, reference_updates
from kgrag_neo4j.entities.linking import VocabularyName, closeness, first_word, key_words, link_document, text_words
from kgrag_neo4j.entities.maintain import MaintainOptions, maintain_entity_graph
from kgrag_neo4j.entities.names import display_name, name_type, scan_chunk
from kgrag_neo4j.ingestion.chunkers import RecursiveChunker
from kgrag_neo4j.ingestion.ingestor import Ingestor
from kgrag_neo4j.store import Neo4jStore

# --- pure ------------------------------------------------------------------------------------


def test_scan_counts_names_and_cues():
    scan = scan_chunk("c1", "Winter is coming. Mr. Ned Stark rode to Winterfell. Ned Stark lived in Winterfell.")
    got = {s.key: s for s in scan.names}
    assert "winter" in got and got["winter"].support == 0  # a lone word opening a sentence
    assert got["ned stark"].support == 2 and got["ned stark"].person == 1
    assert got["winterfell"].location == 1 and got["winterfell"].occurrences == 2


@pytest.mark.parametrize(
    "forms, counts, expect",
    [
        (["Ned Stark"], [2], "Ned Stark"),
        (["NED STARK", "Ned Stark"], [1, 1], "Ned Stark"),  # a tie: not all capitals
        (["NASA", "Nasa"], [3, 1], "NASA"),  # the most written form wins
        (["B", "A"], [1, 1], "A"),  # then the smallest
        (["Given"], [0], "Given"),  # a name the user gave, no chunk writes it
        (["Gone", "Here"], [0, 1], "Here"),
    ],
)
def test_display_name_is_a_function_of_the_counts(forms, counts, expect):
    assert display_name(forms, counts) == expect
    assert display_name(list(reversed(forms)), list(reversed(counts))) == expect


@pytest.mark.parametrize(
    "stats, expect",
    [
        ({"occurrences": 0}, "OTHER"),
        ({"occurrences": 2, "person": 1}, "PERSON"),
        ({"occurrences": 3, "weak": 1}, "OTHER"),
    ],
)
def test_name_type_from_summed_cues(stats, expect):
    assert name_type("Robb", stats) == expect


@pytest.mark.parametrize(
    "text, names",
    [
        ("(Ned Stark's) sword, the .NET runtime and AT&T.", ["Ned Stark", "NET", ".NET", "AT&T", "the Runtime"]),
        ("STRASSE and Straße; the ﬁle of Node.js, foo_Bar", ["Straße", "file", "Node", "js", "Bar", "Foo"]),
        ("İstanbul and ISTANBUL, Ωμέγα", ["istanbul", "İstanbul", "ΩΜΈΓΑ"]),
    ],
)
def test_text_words_hold_the_words_of_every_name_the_gazetteer_can_match(text, names):
    from kgrag_neo4j.entities.gazetteer import Gazetteer
    from kgrag_neo4j.types.entities import normalise_name

    words = text_words([text])
    for m in Gazetteer(names).find(text):
        key = normalise_name(m.key)
        assert first_word(key) in words and set(key_words(key)) <= words, (m, words)
    assert first_word("u.s. army") == "u" and first_word("...") == ""
    assert key_words("u.s. army of the u.s.") == ["u", "s", "army", "of", "the"]


def test_link_document_short_forms_and_lowercase_words():
    vocabulary = {
        k: VocabularyName(k, d) for k, d in [("robert baratheon", "Robert Baratheon"), ("robert", "Robert"), ("bank", "Bank")]
    }
    chunks = [("a", "Robert Baratheon was king. Robert drank."), ("b", "The bank of the river. A bank. Bank of X.")]
    links = link_document("ns", chunks, vocabulary)
    assert links[0].mentions["robert baratheon"][0] == 2 and "robert" not in links[0].mentions
    assert links[1].mentions["bank"][0] == 1  # mostly lower case in this document: capitalised only
    assert closeness(0) == 1_000_000 and closeness(10) == 500_000


@pytest.mark.parametrize(
    "old_df, df, rechunked, moves",
    [
        (0, 1, False, False),  # new: every chunk mentioning it was linked again, marked already
        (0, 50, False, False),
        (0, 2, True, False),
        (1, 1, False, False),
        (1, 2, False, True),  # now links its two chunks
        (2, 1, True, True),  # the other chunk loses the pair
        (3, 4, False, True),  # the weight of the pair moved
        (3, 3, False, False),  # the same chunks
        (3, 3, True, True),  # as many chunks, but another one among them
        (1, 1, True, False),  # one chunk links none, whichever it is
        (40, 40, True, False),
        (10, 11, False, True),  # out of the range: links none now
        (11, 10, False, True),
        (11, 40, False, False),  # linked none before, links none now
        (5, 0, True, True),
    ],
)
def test_an_entity_count_moves_references_only_within_the_linking_range(old_df, df, rechunked, moves):
    from kgrag_neo4j.entities.maintain import _references_move

    assert _references_move(old_df, df, 10, rechunked=rechunked) is moves


def test_reference_updates_match_the_whole_namespace_rule():
    rng = random.Random(7)
    chunks = [f"c{i}" for i in range(12)]
    mentions = {c: rng.sample([f"e{j}" for j in range(8)], 3) for c in chunks}
    expect = {(e.source_id, e.target_id): e.weight for e in entity_chunk_edges(mentions, max_chunks=10, per_chunk=2)}
    df: dict[str, int] = {}
    for ents in mentions.values():
        for e in ents:
            df[e] = df.get(e, 0) + 1
    found = []
    for a in chunks:
        cands: dict[str, int] = {}
        for e in mentions[a]:
            if 2 <= df[e] <= 10:
                for b in chunks:
                    if b != a and e in mentions[b]:
                        cands[b] = cands.get(b, 0) + 2520 // (df[e] - 1)
        found.append({"id": a, "candidates": [[b, w] for b, w in cands.items()], "edges": []})
    rows, drop = reference_updates(found, per_chunk=2, unit=2520)
    assert not drop
    assert {(s, t): w for s, t, w, _ in rows} == expect


# --- on the server ----------------------------------------------------------------------------

CORPUS = {
    "ned.txt": "Ned Stark rode to Winterfell. Mr. Ned Stark met Robert Baratheon in Winterfell.\n\n"
    "Robert drank with Ned at the Red Keep.",
    "arya.txt": "Arya Stark trained in Braavos. Arya Stark missed Winterfell and Ned Stark.",
    "jon.txt": "Jon Snow went to the Wall. Jon Snow spoke of Winterfell and Arya Stark near the Wall.",
    "bran.txt": "Bran Stark climbed the towers of Winterfell. Hodor carried Bran Stark.",
    "tyrion.txt": "Tyrion Lannister drank in King's Landing. Tyrion Lannister mocked Robert Baratheon.",
    "braavos.txt": "Braavos is a free city. The Iron Bank of Braavos lent gold to Robert Baratheon.",
}
VERSIONS = {
    "ned.txt": "Ned Stark rode to the Wall with Jon Snow. Lord Ned Stark spoke of Hodor.",
    "jon.txt": "Jon Snow met Tyrion Lannister at the Wall. Hodor held the door at Winterfell.",
    "braavos.txt": "Braavos banks. Arya Stark lived in Braavos near the Iron Bank of Braavos.",
}


def _dump(store: Neo4jStore) -> dict:
    """The entity graph without ids of the namespace: entities by name key, chunks by
    (source, index)."""
    rows = store.runner.driver.execute_query(
        """
        MATCH (d:Document {namespace: $ns})-[:HAS_CHUNK]->(c:Chunk)
        WITH c, d.source + '#' + toString(c.chunk_index) AS ref
        CALL (c) { MATCH (c)-[m:MENTIONS]->(e:Entity) RETURN collect([e.name_key, m.count]) AS mentions }
        CALL (c) { MATCH (c)-[r:RELATES_TO {relation: 'references'}]->(x:Chunk)<-[:HAS_CHUNK]-(xd:Document)
                   WHERE r.origin = 'entities'
                   RETURN collect([xd.source + '#' + toString(x.chunk_index), r.weight]) AS refs }
        RETURN ref, mentions, refs
        """,
        ns=store.namespace,
        database_=store.runner.database,
    ).records
    chunks = {r["ref"]: (sorted(map(tuple, r["mentions"])), sorted(map(tuple, r["refs"]))) for r in rows}
    rows = store.runner.driver.execute_query(
        """
        MATCH (e:Entity {namespace: $ns})
        OPTIONAL MATCH (c:Chunk {id: e.source_chunk_id})<-[:HAS_CHUNK]-(d:Document)
        RETURN e.name_key AS key, e.name AS name, e.type AS type, e.description AS description,
               d.source + '#' + toString(c.chunk_index) AS source
        """,
        ns=store.namespace,
        database_=store.runner.database,
    ).records
    entities = {r["key"]: (r["name"], r["type"], r["description"], r["source"]) for r in rows}
    rows = store.runner.driver.execute_query(
        """
        MATCH (a:Entity {namespace: $ns})-[r:RELATED_TO]->(b:Entity)
        RETURN a.name_key AS a, b.name_key AS b, r.type AS type, r.weight AS weight, r.windows AS windows,
               r.description AS description
        """,
        ns=store.namespace,
        database_=store.runner.database,
    ).records
    relations = {(r["a"], r["b"], r["type"]): (round(r["weight"], 9), r["windows"], r["description"]) for r in rows}
    return {"chunks": chunks, "entities": entities, "relations": relations}


def _assert_equals_a_rebuild(store: Neo4jStore, embedder) -> None:
    """The maintained graph is the one a build from scratch makes of the same chunks (in
    place: ids, which break ties, embed the namespace)."""
    got = _dump(store)
    maintain_entity_graph(store, embedder, rebuild=True)
    assert got == _dump(store)


def _assert_link_forms_add_up(store: Neo4jStore) -> None:
    """A document's link context is the sum of its chunks' shares (each linked chunk's share
    is taken out of it and put back when the chunk is linked again)."""
    rows = store.runner.driver.execute_query(
        """
        MATCH (d:Document {namespace: $ns}) WHERE d.link_forms IS NOT NULL
        CALL (d) { MATCH (d)-[:HAS_CHUNK]->(c:Chunk) WHERE c.link_forms IS NOT NULL
                   RETURN collect([c.link_forms, c.link_counts]) AS shares }
        RETURN d.source AS source, d.link_forms AS forms, d.link_counts AS counts, shares
        """,
        ns=store.namespace,
        database_=store.runner.database,
    ).records
    for r in rows:
        summed: dict[str, list[int]] = {}
        for forms, counts in r["shares"]:
            for i, form in enumerate(forms):
                total = summed.setdefault(form, [0, 0, 0])
                total[0] += counts[2 * i]
                total[1] += counts[2 * i + 1]
                total[2] += 1
        stored = {f: list(r["counts"][3 * i : 3 * i + 3]) for i, f in enumerate(r["forms"])}
        assert stored == summed, r["source"]


def _assert_co_occurrences_describe_their_ends(store: Neo4jStore) -> int:
    """Every co-occurrence carries the weight of its strength and a description with its
    entities' names as they are now (written with the sums, and again when a name changes)."""
    rows = store.runner.driver.execute_query(
        """
        MATCH (a:Entity {namespace: $ns})-[r:RELATED_TO {relation_key: 'CO_OCCURS'}]->(b:Entity)
        RETURN a.name AS a, b.name AS b, r.strength AS strength, r.windows AS windows, r.weight AS weight,
               r.description AS description, r.metadata AS metadata, r.changed AS changed
        """,
        ns=store.namespace,
        database_=store.runner.database,
    ).records
    for r in rows:
        s = r["strength"] / 1_000_000
        plural = "" if r["windows"] == 1 else "s"
        assert r["description"] == f"{r['a']} and {r['b']} appear together in {r['windows']} sentence{plural}", dict(r)
        assert r["weight"] == pytest.approx(s / (s + 1)), dict(r)
        assert r["metadata"] == f'{{"count": {r["windows"]}, "window": "sentence"}}' and r["changed"] is None
    return len(rows)


def _ingest(store, embedder, files: dict[str, str]) -> None:
    ing = Ingestor(store, embedder, chunker=RecursiveChunker(max_tokens=16, overlap_tokens=0), entities=False)
    for source, text in files.items():
        ing.ingest_text(text, source=source, title=source)


@pytest.mark.parametrize(
    "seed, whole_vocabulary, large_deletes, names_held",
    [
        (2026, False, False, None),
        (7, False, False, None),
        (11, False, False, None),
        (23, False, False, None),
        (2026, True, False, None),
        (11, False, True, None),
        (7, True, False, 1),
    ],
)
def test_maintained_graph_equals_a_full_build_after_random_changes(
    store, hashing_embedder, seed, whole_vocabulary, large_deletes, names_held, monkeypatch
):
    import kgrag_neo4j.entities.link_batches as link_batches
    import kgrag_neo4j.store.documents as store_documents

    # every batch linked against the whole vocabulary held in memory, as in a large run
    monkeypatch.setattr(link_batches, "WHOLE_VOCABULARY_AFTER", 1 if whole_vocabulary else 10**9)
    monkeypatch.setattr(link_batches, "NAMES_PER_CHUNK_LINKED", 10**9 if whole_vocabulary else 10)
    if names_held is not None:  # a vocabulary too large to hold: every batch looks its names up afresh
        monkeypatch.setattr(link_batches, "VOCABULARY_IN_MEMORY", names_held)
    if large_deletes:  # every delete goes the way of a large document's: one chunk a transaction
        monkeypatch.setattr(store_documents, "LARGE_DOCUMENT_CHUNKS", 0)
        monkeypatch.setattr(store_documents, "STAGE_ROWS", 1)
    rng = random.Random(seed)
    options = MaintainOptions(batch_chunks=3)  # several batches even on a small corpus
    live: dict[str, str] = {}
    sources = sorted(CORPUS)
    first = rng.sample(sources, 3)
    _ingest(store, hashing_embedder, {s: CORPUS[s] for s in first})
    live.update({s: CORPUS[s] for s in first})
    assert maintain_entity_graph(store, hashing_embedder, create=True, options=options) is not None
    described = _assert_co_occurrences_describe_their_ends(store)
    for _step in range(8):
        op = rng.choice(["add", "replace", "delete"])
        if op == "add" and len(live) < len(sources):
            s = rng.choice([s for s in sources if s not in live])
            live[s] = CORPUS[s]
            _ingest(store, hashing_embedder, {s: live[s]})
        elif op == "replace" and live:
            s = rng.choice(sorted(live))
            live[s] = VERSIONS.get(s, live[s] + " Hodor said Hodor.") if live[s] != VERSIONS.get(s) else CORPUS[s]
            _ingest(store, hashing_embedder, {s: live[s]})
        elif live:
            s = rng.choice(sorted(live))
            del live[s]
            doc = next(d for d in store.list_documents() if d.source == s)
            store.delete_document(doc.id)
        maintain_entity_graph(store, hashing_embedder, options=options)
        state = store.entity_graph_state()
        assert state["documents"] == state["documents_linked"] == len(live)
        _assert_link_forms_add_up(store)
        described += _assert_co_occurrences_describe_their_ends(store)
    assert described
    # the same chunks built from scratch: in place, since ids (which break ties) embed the namespace
    got = _dump(store)
    maintain_entity_graph(store, hashing_embedder, rebuild=True)
    expect = _dump(store)
    assert got["entities"] == expect["entities"]
    assert got["relations"] == expect["relations"]
    assert got["chunks"] == expect["chunks"]
    assert expect["relations"] and any(refs for _, refs in expect["chunks"].values())


def _entity_vectors(store: Neo4jStore) -> dict:
    prop = store.vector_slot().vector_property
    rows = store.runner.driver.execute_query(
        "MATCH (e:Entity {namespace: $ns}) RETURN e.name_key AS key, e.name AS name, e.description AS description, e[$prop] AS v",
        ns=store.namespace,
        prop=prop,
        database_=store.runner.database,
    ).records
    return {r["key"]: (r["name"], r["description"], None if r["v"] is None else [round(x, 6) for x in r["v"]]) for r in rows}


def test_entities_updated_in_small_writes_get_the_same_names_and_vectors(store, hashing_embedder, monkeypatch):
    """Entities are embedded one write at a time (the memory of a page of vectors): a page
    split into writes of two entities gives every entity the name, description and vector of
    a build that writes them all at once."""
    import kgrag_neo4j.entities.maintain as maintain

    _ingest(store, hashing_embedder, {s: CORPUS[s] for s in sorted(CORPUS)[:4]})
    maintain_entity_graph(store, hashing_embedder, create=True)
    whole = _entity_vectors(store)
    monkeypatch.setattr(maintain, "_ENTITY_WRITE", 2)
    maintain_entity_graph(store, hashing_embedder, rebuild=True)
    parts = _entity_vectors(store)
    assert len(whole) > 4 and all(v is not None for _, _, v in whole.values())
    assert parts == whole


#: documents of several chunks each (16 tokens a chunk) whose links depend on the document:
#: "robert.txt" and "bank.txt" write "robert baratheon" and "bank of braavos" in lower case
#: only, so those names enter the vocabulary with "kings.txt", which writes them inside a
#: sentence; then "Robert" is short for "Robert Baratheon" in "robert.txt" (in chunks that do
#: not write the longer name), and "bank" is no longer mostly lower case in "bank.txt" (the
#: longer name hides one), so its lower-case "bank" counts too, for "Bank of Braavos";
#: "Stark's" writes "Stark"
CONTEXT_CORPUS = {
    "robert.txt": "They drank to robert baratheon that night. The hall was loud and warm.\n\n"
    "Robert drank the strong red wine from the south.\n\nLater Robert slept by the fire.",
    "bank.txt": "Bank clerks count the coins all day long.\n\n"
    "Few trust the bank of braavos with gold.\n\nThe boats passed the river bank slowly.",
    "river.txt": "A boat passed the Bank today.\n\nLord Stark's men watched it go.",
    "kings.txt": "The old songs praise King Robert Baratheon and Lord Eddard Stark.\n\n"
    "Every debt is owed to the Bank of Braavos.",
    "stark.txt": "Stark spoke to his sons about the Wall and Robert.",
}
CONTEXT_VERSIONS = {
    "robert.txt": "Robert drank alone.\n\nrobert baratheon went hunting in the woods.",
    "bank.txt": "The bank of braavos is old.\n\nBank towers stand tall. Bank clerks count.",
    "kings.txt": "The songs praise Lord Eddard Stark only.",
}


def test_a_name_entering_relinks_the_chunks_its_document_context_changes(store, hashing_embedder, monkeypatch):
    """ "Robert Baratheon" and "Bank of Braavos" enter with kings.txt: robert.txt's and
    bank.txt's chunks that write them are linked again, and so are those that write only
    "Robert" (now its short form there) or "bank" in lower case (counted there now, as the
    short form of the bank), which the full-text index cannot find: their document's context
    brings them."""
    import kgrag_neo4j.entities.link_batches as link_batches

    linked: list[str] = []
    original = link_batches.Linker.relink

    def relink(self, links, documents, generation):
        done = original(self, links, documents, generation)
        linked.extend(r["chunk_id"] for r in links.chunks)
        return done

    monkeypatch.setattr(link_batches.Linker, "relink", relink)
    options = MaintainOptions(batch_chunks=4)
    _ingest(store, hashing_embedder, {s: CONTEXT_CORPUS[s] for s in ("robert.txt", "bank.txt", "river.txt")})
    maintain_entity_graph(store, hashing_embedder, create=True, options=options)
    before = _dump(store)["chunks"]
    assert before["robert.txt#2"][0] == [("robert", 1)] and before["bank.txt#2"][0] == []
    _ingest(store, hashing_embedder, {"kings.txt": CONTEXT_CORPUS["kings.txt"]})
    result = maintain_entity_graph(store, hashing_embedder, options=options)
    got = _dump(store)
    assert got["chunks"]["robert.txt#2"][0] == [("robert baratheon", 1)]
    # "bank" counts in lower case there now, and stands for the one longer name it opens
    assert got["chunks"]["bank.txt#2"][0] == [("bank of braavos", 1)]
    # the chunks writing the new names were marked; the others came from their documents' context
    assert result.relinked == 2 and result.relinked_chunks == 2
    chunk_of = {c.id: f"{d.source}#{c.chunk_index}" for d in store.list_documents() for c in store.list_document_chunks(d.id)}
    assert {"robert.txt#2", "robert.txt#3", "bank.txt#2"} <= {chunk_of[c] for c in linked}
    maintain_entity_graph(store, hashing_embedder, rebuild=True, options=options)
    assert got == _dump(store)


def test_a_chunk_linked_for_its_document_context_brings_its_new_share_of_the_forms(store, hashing_embedder):
    """ "apple" entered while robert.txt wrote it only in lower case (so none of its chunks was
    linked again); when "Robert Baratheon" enters, the chunk writing "Robert" is linked for
    its document's context and now writes "apple" too: the document's forms take that in,
    and still add up to its chunks' shares, as in a build from scratch."""
    options = MaintainOptions(batch_chunks=4)
    robert = (
        "They drank to robert baratheon that night. The hall was loud and warm.\n\n"
        "Robert ate a green apple from the south.\n\nLater Robert slept by the fire."
    )
    _ingest(store, hashing_embedder, {"robert.txt": robert})
    maintain_entity_graph(store, hashing_embedder, create=True, options=options)
    _ingest(store, hashing_embedder, {"fruit.txt": "They shipped crates to Apple in the spring."})
    result = maintain_entity_graph(store, hashing_embedder, options=options)
    assert result.names_entered >= 1 and result.relinked == 0  # lower case only in robert.txt
    _ingest(store, hashing_embedder, {"kings.txt": CONTEXT_CORPUS["kings.txt"]})
    maintain_entity_graph(store, hashing_embedder, options=options)
    _assert_link_forms_add_up(store)
    forms = store.runner.driver.execute_query(
        "MATCH (d:Document {namespace: $ns, source: 'robert.txt'}) RETURN d.link_forms AS forms",
        ns=store.namespace,
        database_=store.runner.database,
    ).records[0]["forms"]
    assert "apple" in forms
    got = _dump(store)
    maintain_entity_graph(store, hashing_embedder, rebuild=True, options=options)
    assert got == _dump(store)


@pytest.mark.parametrize("seed, whole_vocabulary", [(3, False), (5, False), (8, False), (13, True), (21, False)])
def test_chunks_linked_again_in_their_document_context_equal_a_full_build(
    store, hashing_embedder, seed, whole_vocabulary, monkeypatch
):
    """Names entering and leaving change the links of chunks that do not write them (a short
    form whose longer name came, a one-word name now mostly lower case in its document): the
    chunks linked again alone, with their document's context, end where a full build does."""
    import kgrag_neo4j.entities.link_batches as link_batches

    monkeypatch.setattr(link_batches, "WHOLE_VOCABULARY_AFTER", 1 if whole_vocabulary else 10**9)
    monkeypatch.setattr(link_batches, "NAMES_PER_CHUNK_LINKED", 10**9 if whole_vocabulary else 10)
    rng = random.Random(seed)
    options = MaintainOptions(batch_chunks=4)
    live: dict[str, str] = {}
    sources = sorted(CONTEXT_CORPUS)
    first = rng.sample(sources, 2)
    _ingest(store, hashing_embedder, {s: CONTEXT_CORPUS[s] for s in first})
    live.update({s: CONTEXT_CORPUS[s] for s in first})
    maintain_entity_graph(store, hashing_embedder, create=True, options=options)
    for _step in range(10):
        op = rng.choice(["add", "add", "replace", "delete"])
        if op == "add" and len(live) < len(sources):
            s = rng.choice([s for s in sources if s not in live])
            live[s] = CONTEXT_CORPUS[s]
            _ingest(store, hashing_embedder, {s: live[s]})
        elif op == "replace" and live:
            s = rng.choice(sorted(live))
            live[s] = (
                CONTEXT_VERSIONS.get(s, live[s] + " Robert said Stark.")
                if live[s] != CONTEXT_VERSIONS.get(s)
                else CONTEXT_CORPUS[s]
            )
            _ingest(store, hashing_embedder, {s: live[s]})
        elif live:
            s = rng.choice(sorted(live))
            del live[s]
            doc = next(d for d in store.list_documents() if d.source == s)
            store.delete_document(doc.id)
        maintain_entity_graph(store, hashing_embedder, options=options)
        state = store.entity_graph_state()
        assert state["documents"] == state["documents_linked"] == len(live)
        _assert_link_forms_add_up(store)
        _assert_co_occurrences_describe_their_ends(store)
        got = _dump(store)
        maintain_entity_graph(store, hashing_embedder, rebuild=True, options=options)
        assert got == _dump(store), f"step {_step}: {op}"


def test_a_kept_chunk_of_a_new_version_gives_way_to_an_earlier_mention(store, hashing_embedder):
    """A new version of a document keeps its unchanged chunks, but at the version's time: the
    entity whose earliest mention such a chunk was has another chunk first now, as a full
    build finds."""
    import time as _time

    ing = Ingestor(store, hashing_embedder, chunker=RecursiveChunker(max_tokens=24, overlap_tokens=0))
    kept = "Alice Cooper opens the heavy northern gate of the old castle at dawn."
    first, second = "Alice Cooper waits beside the river until the boats come.", "Alice Cooper waits beside the lake."

    def next_second() -> None:  # chunk times are whole seconds
        _time.sleep(1.05 - _time.time() % 1)

    ing.ingest_text(f"{kept}\n\n{first}", source="a.txt", title="a.txt")
    assert len(store.list_document_chunks(next(d.id for d in store.list_documents() if d.source == "a.txt"))) == 2
    maintain_entity_graph(store, hashing_embedder, create=True)
    assert _dump(store)["entities"]["alice cooper"][2].startswith("Alice Cooper opens")
    next_second()
    ing.ingest_text("Alice Cooper sings in the great hall every evening.", source="b.txt", title="b.txt")
    next_second()
    ing.ingest_text(f"{kept}\n\n{second}", source="a.txt", title="a.txt")  # the first chunk is kept

    got = _dump(store)
    maintain_entity_graph(store, hashing_embedder, rebuild=True)
    expect = _dump(store)
    assert expect["entities"]["alice cooper"][2].startswith("Alice Cooper sings")
    assert got["entities"] == expect["entities"]
    assert got["chunks"] == expect["chunks"]


def test_the_documents_of_one_run_are_described_in_id_order_however_long_it_takes(store, hashing_embedder, tmp_path, monkeypatch):
    """Every document of one ingest run carries the run's time, so an entity two of them
    mention takes its description from the one with the smaller id, even when a second
    passes between them (the clock ticks ten seconds a reading here)."""
    import time as _time

    from kgrag_neo4j import ids

    texts = {
        "one.txt": "Alice Cooper opens the heavy northern gate of the old castle.",
        "two.txt": "Alice Cooper sings in the great hall every evening.",
    }
    paths = {}
    for name, text in texts.items():
        (tmp_path / name).write_text(text)
        paths[name] = str((tmp_path / name).resolve())
    by_id = sorted(paths, key=lambda n: ids.document_id(store.namespace, paths[n]))
    real, ticks = _time.time, iter(range(0, 10_000, 10))
    monkeypatch.setattr(_time, "time", lambda: real() + next(ticks))
    ing = Ingestor(store, hashing_embedder, entities=False)
    # the larger id first: a clock read per document would put it first in time
    results = ing.ingest_paths([paths[by_id[1]], paths[by_id[0]]])
    assert [r.status for r in results] == ["new", "new"]
    monkeypatch.setattr(_time, "time", real)
    assert len({d.created_at for d in store.list_documents()}) == 1
    maintain_entity_graph(store, hashing_embedder, create=True)
    assert _dump(store)["entities"]["alice cooper"][2] == texts[by_id[0]]


def _graph_left(store: Neo4jStore) -> dict:
    """What of an entity graph the namespace still holds, counted by kind."""
    rows = store.runner.driver.execute_query(
        """
        CALL () { MATCH (:Chunk {namespace: $ns})-[m:MENTIONS]->() WHERE m.extracted RETURN count(m) AS mentions }
        CALL () { MATCH (:Chunk {namespace: $ns})-[r:RELATES_TO {relation: 'references'}]->()
                  WHERE r.origin = 'entities' RETURN count(r) AS references }
        CALL () { MATCH (e:Entity) WHERE coalesce(e.namespace, e.staged_namespace) = $ns RETURN count(e) AS entities }
        CALL () { MATCH (n:EntityName {namespace: $ns}) RETURN count(n) AS names }
        CALL () { MATCH (c:Chunk {namespace: $ns})
                  WHERE c:NameScanned OR c.name_keys IS NOT NULL OR c.pair_a IS NOT NULL OR c.link_forms IS NOT NULL
                     OR c.links_dirty IS NOT NULL OR c.relink IS NOT NULL
                  RETURN count(c) AS chunks }
        CALL () { MATCH (d:Document {namespace: $ns}) WHERE d.entities_hash IS NOT NULL OR d.link_forms IS NOT NULL
                  RETURN count(d) AS documents }
        RETURN mentions, references, entities, names, chunks, documents
        """,
        ns=store.namespace,
        database_=store.runner.database,
    ).records
    return dict(rows[0])


def test_clearing_a_graph_page_by_page_leaves_nothing_of_it_and_other_namespaces_whole(
    store, hashing_embedder, driver, neo4j_settings, make_namespace
):
    other = Neo4jStore(driver, namespace=make_namespace(), database=neo4j_settings.database)
    for s in (store, other):
        _ingest(s, hashing_embedder, CORPUS)
        maintain_entity_graph(s, hashing_embedder, create=True)
    kept = _dump(other)
    built = _graph_left(store)
    assert all(built[k] for k in ("mentions", "references", "entities", "names", "chunks", "documents")), built
    # pages of one chunk: each starts after the last one's id, the other namespace's chunks between
    removed = store.clear_entity_graph(batch_size=5)
    assert removed >= built["mentions"] + built["references"] + built["entities"] + built["names"]
    assert _graph_left(store) == dict.fromkeys(built, 0)
    assert _dump(other) == kept
    assert store.entity_pending_documents(limit=100) and len(store.entity_pending_documents(limit=100)) == len(CORPUS)


def _count_pending_reads(store: Neo4jStore, monkeypatch) -> list[int]:
    """The size of each page of pending documents the store is asked for, from now on."""
    pages: list[int] = []
    read = store.entity_pending_documents

    def counted(**kwargs):
        ids = read(**kwargs)
        pages.append(len(ids))
        return ids

    monkeypatch.setattr(store, "entity_pending_documents", counted)
    return pages


@pytest.mark.parametrize("page, reads", [(2, 4), (4, 2), (6, 2), (7, 1)])
def test_pending_documents_are_read_a_page_at_a_time_until_a_short_page(store, hashing_embedder, monkeypatch, page, reads):
    """Every pending document is linked over pages of any size, and a page shorter than the
    page size is the last read (each read scans the namespace's documents)."""
    import kgrag_neo4j.entities.link_batches as link_batches

    _ingest(store, hashing_embedder, CORPUS)
    monkeypatch.setattr(link_batches, "DOCUMENT_PAGE", page)
    read = store.entity_pending_documents
    pages = _count_pending_reads(store, monkeypatch)
    batches = list(link_batches.document_batches(store, 1000))
    assert sorted(d["document_id"] for b in batches for d in b) == sorted(read(limit=100))
    assert len(pages) == reads and pages[-1] < page


def test_a_run_reads_the_pending_documents_once_a_round_and_once_to_find_none_left(store, hashing_embedder, monkeypatch):
    """The scan reads them, the link round reads and links them, and the next round finds
    none left: three reads (each scans the namespace's documents)."""
    _ingest(store, hashing_embedder, CORPUS)
    read = store.entity_pending_documents
    pages = _count_pending_reads(store, monkeypatch)
    result = maintain_entity_graph(store, hashing_embedder, create=True)
    assert result.documents == len(CORPUS)
    assert pages == [len(CORPUS), len(CORPUS), 0]
    assert read(limit=100) == []


def test_a_renamed_entity_describes_its_co_occurrences_with_its_new_name(store, hashing_embedder):
    """A name whose most written form changes is renamed, and the co-occurrences of chunks
    not linked again say the new name (as a build of the same documents does)."""
    _ingest(store, hashing_embedder, {"a.txt": "The engineers of Nasa worked with Boeing on the rocket."})
    maintain_entity_graph(store, hashing_embedder, create=True)
    assert _assert_co_occurrences_describe_their_ends(store)
    before = _dump(store)["relations"]
    assert any("Nasa" in d for _, _, d in before.values())
    # three chunks write it in capitals: the most written form
    later = (
        "They called NASA about the launch window and the weather over the coast.\n\n"
        "The NASA team met the pilots early in the morning before the storm came in.\n\n"
        "A NASA launch came late in the year after many delays and reviews."
    )
    _ingest(store, hashing_embedder, {"b.txt": later})
    maintain_entity_graph(store, hashing_embedder)
    [nasa] = store.get_entity_by_name("NASA", limit=1)
    assert nasa.entity.name == "NASA"
    assert _assert_co_occurrences_describe_their_ends(store)
    got = _dump(store)
    assert any("NASA and Boeing" in d or "Boeing and NASA" in d for _, _, d in got["relations"].values())
    maintain_entity_graph(store, hashing_embedder, rebuild=True)
    assert got == _dump(store)


def test_an_unchanged_namespace_does_nothing(store, hashing_embedder):
    _ingest(store, hashing_embedder, CORPUS)
    maintain_entity_graph(store, hashing_embedder, create=True)
    again = maintain_entity_graph(store, hashing_embedder)
    assert (again.documents, again.chunks, again.entities, again.entity_edges) == (0, 0, 0, 0)


def test_a_plain_namespace_gets_no_graph(store, hashing_embedder):
    _ingest(store, hashing_embedder, {"a.txt": "Ned Stark rode to Winterfell."})
    assert maintain_entity_graph(store, hashing_embedder) is None
    assert store.entity_graph_state()["has_graph"] is False


def test_a_new_name_links_the_older_chunks_that_write_it(store, hashing_embedder):
    # "Hodor" opens its sentence alone in the first document: not a name yet
    _ingest(store, hashing_embedder, {"a.txt": "Hodor. The giant held the door."})
    maintain_entity_graph(store, hashing_embedder, create=True)
    assert not store.get_entity_by_name("Hodor", limit=5) if _has("Hodor", store) else True
    _ingest(store, hashing_embedder, {"b.txt": "They called him Hodor at Winterfell."})
    result = maintain_entity_graph(store, hashing_embedder)
    assert result.relinked >= 1
    hodor = store.get_entity_by_name("Hodor", limit=5)[0]
    assert hodor.mention_total == 2


def _touches(store: Neo4jStore) -> dict[str, int]:
    rows = store.runner.driver.execute_query(
        "MATCH (e:Entity {namespace: $ns}) RETURN e.name_key AS key, coalesce(e.touches, 0) AS touches",
        ns=store.namespace,
        database_=store.runner.database,
    ).records
    return {r["key"]: r["touches"] for r in rows}


def test_an_older_chunk_gaining_a_name_marks_only_that_name(store, hashing_embedder):
    # the older chunk is written as the difference from what it holds: the entities it
    # mentioned before, unchanged, are not marked for the maintainer again
    _ingest(store, hashing_embedder, {"a.txt": "Arya Stark rode north with Jon Snow. Hodor. The giant held the door."})
    maintain_entity_graph(store, hashing_embedder, create=True)
    before = _touches(store)
    assert {"arya stark", "jon snow"} <= set(before) and "hodor" not in before
    _ingest(store, hashing_embedder, {"b.txt": "They called him Hodor at Winterfell."})
    result = maintain_entity_graph(store, hashing_embedder)
    assert result.relinked >= 1
    assert store.get_entity_by_name("Hodor", limit=5)[0].mention_total == 2
    after = _touches(store)
    assert after["arya stark"] == before["arya stark"] and after["jon snow"] == before["jon snow"]
    _assert_equals_a_rebuild(store, hashing_embedder)


def test_a_mention_moving_to_another_chunk_decides_the_references_of_its_other_chunks_again(store, hashing_embedder):
    """ "Alice Cooper" stays in two chunks, but one of them is another chunk now: the chunk that
    kept it picks its heaviest edge again (the new chunk, not the one that lost the mention),
    as a build from scratch does, though the chunk count did not move."""
    options = MaintainOptions(edges_per_chunk=1)
    _ingest(
        store,
        hashing_embedder,
        {
            "l.txt": "Alice Cooper met the crowd.",
            "m.txt": "Alice Cooper and Bob Dylan sang.",
            # o.txt and p.txt pick each other (two names shared), not m.txt
            "o.txt": "Bob Dylan and Joan Baez wrote songs.",
            "p.txt": "Bob Dylan and Joan Baez played guitar.",
            "q.txt": "Carol King and David Bowie danced.",
        },
    )
    maintain_entity_graph(store, hashing_embedder, create=True, options=options)
    assert [x for x, _ in _dump(store)["chunks"]["m.txt#0"][1]] == ["l.txt#0"]
    # l.txt no longer names her; n.txt does, and picks q.txt (two names shared) over m.txt
    _ingest(
        store, hashing_embedder, {"l.txt": "The crowd went home.", "n.txt": "Alice Cooper, Carol King and David Bowie danced."}
    )
    maintain_entity_graph(store, hashing_embedder, options=options)
    got = _dump(store)
    assert "n.txt#0" in [x for x, _ in got["chunks"]["m.txt#0"][1]]
    maintain_entity_graph(store, hashing_embedder, rebuild=True, options=options)
    assert got == _dump(store)


def test_a_graph_an_older_version_made_is_upgraded_before_it_is_maintained(store, hashing_embedder, monkeypatch):
    """A graph made before names carried their key's words and scanned chunks were labelled for
    the chunk_names index: the first maintenance gives both (a page at a time), and a name
    entering then still finds the older chunks that write it."""
    import kgrag_neo4j.entities.maintain as maintain

    _ingest(store, hashing_embedder, {"a.txt": "Hodor. The giant held the door.", "c.txt": "Ned Stark rode to Winterfell."})
    maintain_entity_graph(store, hashing_embedder, create=True)
    run = store.runner.driver.execute_query
    run(
        "MATCH (c:Chunk {namespace: $ns}) REMOVE c:NameScanned WITH count(*) AS one "
        "MATCH (n:EntityName {namespace: $ns}) REMOVE n.first, n.words WITH count(*) AS two "
        "MATCH (k:KgragMeta {key: 'entity-graph:' + $ns}) REMOVE k.name_words, k.name_scanned",
        ns=store.namespace,
    )
    assert store.entity_graph_record() == {
        "generation": store.entity_graph_generation(),
        "name_words": False,
        "name_scanned": False,
    }
    monkeypatch.setattr(maintain, "LABEL_PAGE", 1)
    _ingest(store, hashing_embedder, {"d.txt": "They called him Hodor at Winterfell."})
    result = maintain_entity_graph(store, hashing_embedder)
    record = store.entity_graph_record()
    assert record is not None and record["name_words"] and record["name_scanned"]
    unlabelled = run(
        "MATCH (c:Chunk {namespace: $ns}) WHERE c.name_keys IS NOT NULL AND NOT c:NameScanned RETURN count(c) AS n",
        ns=store.namespace,
    ).records[0]["n"]
    assert unlabelled == 0
    assert result.relinked == 1
    assert store.get_entity_by_name("Hodor", limit=5)[0].mention_total == 2
    _assert_equals_a_rebuild(store, hashing_embedder)


def test_a_new_one_word_name_relinks_only_its_capitalised_writers(store, hashing_embedder):
    _ingest(
        store,
        hashing_embedder,
        {
            "a.txt": "Hodor. The giant held the door.",  # capitalised, opening its sentence: not a name yet
            "b.txt": "The stable boy said hodor and hodor again to the horses.",  # lower case only
            "c.txt": "Ned Stark rode to Winterfell.",
        },
    )
    maintain_entity_graph(store, hashing_embedder, create=True)
    _ingest(store, hashing_embedder, {"d.txt": "They called him Hodor at Winterfell."})
    result = maintain_entity_graph(store, hashing_embedder)
    by_source = {d.source: d.id for d in store.list_documents()}
    # "hodor" entered: a.txt writes it capitalised and is linked again; b.txt only in lower
    # case, which linking never counts, and is left alone; "Winterfell" was known already
    assert result.names_entered >= 1 and result.relinked == 1 and result.relinked_chunks == 1
    assert sorted({d for d, _ in store.chunks_writing([], [], words=["hodor"])}) == sorted(
        [by_source["a.txt"], by_source["d.txt"]]
    )
    hodor = store.get_entity_by_name("Hodor", limit=5)[0]
    assert hodor.mention_total == 2
    _assert_equals_a_rebuild(store, hashing_embedder)


def test_a_new_name_relinks_only_the_chunks_the_gazetteer_can_find_it_in(store, hashing_embedder):
    _ingest(
        store,
        hashing_embedder,
        {
            "a.txt": "The config key ned_stark is read at start.",  # the index splits at "_", the gazetteer does not
            "b.txt": "They rode to Winterfell in the north.",
        },
    )
    maintain_entity_graph(store, hashing_embedder, create=True)
    by_source = {d.source: d.id for d in store.list_documents()}
    assert by_source["a.txt"] in {d for d, _ in store.chunks_writing(["Ned Stark"], [])}
    _ingest(store, hashing_embedder, {"c.txt": "They say Ned Stark rode to Winterfell."})
    result = maintain_entity_graph(store, hashing_embedder)
    assert result.names_entered == 1 and result.relinked_chunks == 0
    _assert_equals_a_rebuild(store, hashing_embedder)


def test_a_name_gaining_a_form_relinks_only_that_forms_writers(store, hashing_embedder):
    _ingest(
        store,
        hashing_embedder,
        {
            "a.txt": "They called him Hodor at Winterfell.",
            "b.txt": "The stable boy said the hodor was kind.",
            "c.txt": "At the gate Hodor held the door.",
        },
    )
    maintain_entity_graph(store, hashing_embedder, create=True)
    # a title writes the known name "hodor" in a new form, "the Hodor": of the older chunks,
    # only b.txt's writes it (the others write "Hodor", matched all along)
    ing = Ingestor(store, hashing_embedder, chunker=RecursiveChunker(max_tokens=16, overlap_tokens=0), entities=False)
    ing.ingest_text("A song about the giant.", source="song.txt", title="the Hodor")
    result = maintain_entity_graph(store, hashing_embedder)
    assert result.names_entered == 1 and result.relinked_chunks == 1
    _assert_equals_a_rebuild(store, hashing_embedder)


def test_a_document_with_more_marked_chunks_than_a_batch_is_linked_in_parts(store, hashing_embedder, monkeypatch):
    """Seven chunks of one document write "Hodor" when it enters: with two chunks a batch,
    they are linked two at a time (each part read once the one before is written), and end
    as a build from scratch does."""
    import kgrag_neo4j.entities.link_batches as link_batches

    parts: list[int] = []
    original = link_batches.Linker.relink

    def relink(self, links, documents, generation):
        parts.append(sum(len(d["chunks"]) for d in documents))
        return original(self, links, documents, generation)

    monkeypatch.setattr(link_batches.Linker, "relink", relink)
    options = MaintainOptions(batch_chunks=2)
    text = "\n\n".join(f"Hodor. The giant held the door number {n} shut." for n in "one two three four five six seven".split())
    _ingest(store, hashing_embedder, {"a.txt": text, "c.txt": "Ned Stark rode to Winterfell."})
    maintain_entity_graph(store, hashing_embedder, create=True, options=options)
    assert not _has("Hodor", store)
    _ingest(store, hashing_embedder, {"d.txt": "They called him Hodor at Winterfell."})
    result = maintain_entity_graph(store, hashing_embedder, options=options)
    assert result.relinked_chunks == 7 and parts == [2, 2, 2, 1]
    assert store.entity_graph_state()["chunks_to_relink"] == 0
    assert store.get_entity_by_name("Hodor", limit=5)[0].mention_total == 8
    _assert_link_forms_add_up(store)
    got = _dump(store)
    maintain_entity_graph(store, hashing_embedder, rebuild=True, options=options)
    assert got == _dump(store)


def test_a_document_larger_than_a_batch_is_scanned_and_written_a_batch_at_a_time(store, hashing_embedder, monkeypatch):
    """One document is a batch alone however large: its name scans and its links go to the
    server ``batch_chunks`` chunks a transaction (the document's forms with the last), and the
    graph is what a build in one transaction makes."""
    text = "\n\n".join(
        f"Ned Stark rode to Winterfell with Jon Snow on day {n}. Arya Stark stayed."
        for n in "one two three four five six seven".split()
    )
    _ingest(store, hashing_embedder, {"a.txt": text, "b.txt": "Jon Snow met Ned Stark at the Wall."})
    scans: list[int] = []
    writes: list[tuple[int, int]] = []
    apply, write = store.apply_name_scans, store.write_entity_links

    def spy_apply(rows):
        scans.append(len(rows))
        return apply(rows)

    def spy_write(generation, links):
        writes.append((len(links["chunks"]), len(links["documents"])))
        return write(generation, links)

    monkeypatch.setattr(store, "apply_name_scans", spy_apply)
    monkeypatch.setattr(store, "write_entity_links", spy_write)
    maintain_entity_graph(store, hashing_embedder, create=True, options=MaintainOptions(batch_chunks=2))
    total = sum(len(store.list_document_chunks(d.id)) for d in store.list_documents())
    assert total > 8 and scans and max(scans) <= 2 and sum(scans) == total
    assert writes and max(n for n, _ in writes) <= 2 and sum(n for n, _ in writes) == total
    assert sum(d for _, d in writes) == 2  # each document's forms written once, with its last part
    state = store.entity_graph_state()
    assert state["documents"] == state["documents_linked"] == 2
    _assert_link_forms_add_up(store)
    got = _dump(store)
    monkeypatch.undo()
    maintain_entity_graph(store, hashing_embedder, rebuild=True)
    assert got == _dump(store)


def test_chunks_writing_reads_every_page_of_full_text_hits(store, hashing_embedder):
    # more writers than one page of hits holds: every one is found, as with one large page
    _ingest(store, hashing_embedder, {f"w{i}.txt": f"Ned Stark rode to Winterfell, day {i}." for i in range(7)})
    maintain_entity_graph(store, hashing_embedder, create=True)
    whole = store.chunks_writing(["Ned Stark", "Winterfell"], [], words=["winterfell"])
    assert len(whole) == 7
    for limit in (1, 2, 3):
        assert store.chunks_writing(["Ned Stark", "Winterfell"], [], words=["winterfell"], limit=limit) == whole
        assert store.chunks_writing([], [], words=["winterfell"], limit=limit) == whole
    assert store.chunks_writing(["Ned Stark"], ["ned stark"], limit=2) == whole


def _built(store: Neo4jStore, embedder, texts: dict[str, str]) -> dict[str, str]:
    """Ingest ``texts``, build the entity graph, and return the document ids by source."""
    _ingest(store, embedder, texts)
    maintain_entity_graph(store, embedder, create=True)
    return {d.source: d.id for d in store.list_documents()}


def test_chunks_writing_finds_names_the_chunk_index_splits_otherwise(store, hashing_embedder):
    """The gazetteer finds "Stark" in "Stark's", "Node" in "Node.js" and "Bar" in "foo_Bar";
    the standard analyzer of chunk_content keeps those one word each. chunk_names does not."""
    texts = {
        "a.txt": "Arya met Lord Stark's men at the gate.",
        "b.txt": "The server runs on Node.js and more.",
        "c.txt": "Call foo_Bar before the loop.",
        "d.txt": "Nothing here names them.",
    }
    by_source = _built(store, hashing_embedder, texts)
    for name, source in (("Stark", "a.txt"), ("Node", "b.txt"), ("Bar", "c.txt")):
        assert {d for d, _ in store.chunks_writing([name], [])} == {by_source[source]}, name


def test_chunks_writing_keeps_of_a_name_the_index_keeps_in_part_the_chunks_writing_it(store, hashing_embedder):
    # "C--" is the word "c" to the index: of its hits only the chunks writing "c--" in some
    # case are candidates, and a chunk with a lone "c" is not
    texts = {
        "a.txt": "We compile C-- to assembly.",
        "b.txt": "The C language came first. C was small.",
        "c.txt": "Portable c-- code and its tools.",
        "d.txt": "Written as \u212a-- by mistake, and c - - apart.",
    }
    by_source = _built(store, hashing_embedder, texts)
    found = {d for d, _ in store.chunks_writing(["C--"], [])}
    assert found == {by_source["a.txt"], by_source["c.txt"]}
    assert {d for d, _ in store.chunks_writing(["K--"], [])} == {by_source["d.txt"]}
    assert {d for d, _ in store.chunks_writing(["C"], [])} >= {by_source["a.txt"], by_source["b.txt"], by_source["c.txt"]}


def test_a_name_the_index_keeps_in_part_reaches_the_older_chunks_writing_it(store, hashing_embedder):
    # a title that enters the vocabulary links the older chunks writing it in any case
    _ingest(
        store,
        hashing_embedder,
        {"a.txt": "Servers run NODE.JS all day. Jon Snow wrote it.", "b.txt": "Some node.js tools are old. Node is not Node.js."},
    )
    maintain_entity_graph(store, hashing_embedder, create=True)
    _ingest(store, hashing_embedder, {"Node.js": "Node.js runs JavaScript on servers."})
    maintain_entity_graph(store, hashing_embedder)
    got = _dump(store)
    writers = sorted(
        ref.split("#")[0] for ref, (mentions, _) in got["chunks"].items() if any(k == "node.js" for k, _ in mentions)
    )
    assert writers == ["Node.js", "a.txt", "b.txt"]
    _assert_equals_a_rebuild(store, hashing_embedder)


@pytest.mark.parametrize(
    "text, found",
    [
        ("Hodor held the door", True),
        ("HODOR!", True),
        ("said \u212aodor", False),
        ("hodor hodor", False),
        ("Hodors", False),
        ("xHodor", False),
        ("the (Hodor) way", True),
        ("line one\nHodor. two", True),
    ],
)
def test_the_capitalised_pattern_is_what_the_server_matches(store, text, found):
    from kgrag_neo4j.store.entity_graph import capitalised_pattern

    rows = store.runner.driver.execute_query(
        "RETURN $text =~ $pattern AS hit", text=text, pattern=capitalised_pattern(["hodor"]), database_=store.runner.database
    ).records
    assert rows[0]["hit"] is found
    kelvin = store.runner.driver.execute_query(
        "RETURN $text =~ $pattern AS hit",
        text="\u212aing Robert",
        pattern=capitalised_pattern(["king"]),
        database_=store.runner.database,
    ).records
    assert kelvin[0]["hit"] is True


@pytest.mark.parametrize(
    "word, texts",
    [
        ("dirk", ["D\u0131rk ran", "D\u0130RK", "Dirk", "DIRK", "dirk", "xDirk", "Dark"]),
        ("asha", ["A\u017fha", "ASHA", "Asha!", "asha", "Ashara"]),
        ("skagos", ["S\u212aagos", "SKAGOS", "Skagos", "skagos"]),
        ("king", ["\u212aing Robert", "KING", "King", "kINg", "the king"]),
        ("h2o", ["H2O", "H2o", "h2o", "H2 O"]),
    ],
)
def test_a_text_the_capitalised_pattern_matches_holds_one_of_its_beginnings(store, word, texts):
    # the substring test in front of the regular expression may rule a text out only where
    # the server's match would have failed
    from kgrag_neo4j.store.entity_graph import capitalised_pattern, capitalised_starts

    rows = store.runner.driver.execute_query(
        "UNWIND $texts AS text RETURN text, text =~ $pattern AS hit, "
        "any(s IN $starts WHERE text CONTAINS s) AND text =~ $pattern AS checked",
        texts=texts,
        pattern=capitalised_pattern([word]),
        starts=capitalised_starts(word),
        database_=store.runner.database,
    ).records
    assert [(r["text"], r["checked"]) for r in rows] == [(r["text"], r["hit"]) for r in rows]
    assert any(r["hit"] for r in rows) and not all(r["hit"] for r in rows)


def _has(name: str, store: Neo4jStore) -> bool:
    from kgrag_neo4j.errors import NotFoundError

    try:
        store.get_entity_by_name(name, limit=1)
        return True
    except NotFoundError:
        return False


def test_delete_takes_its_entities_and_links_with_it(store, hashing_embedder):
    _ingest(store, hashing_embedder, CORPUS)
    maintain_entity_graph(store, hashing_embedder, create=True)
    assert _has("Tyrion Lannister", store)
    doc = next(d for d in store.list_documents() if d.source == "tyrion.txt")
    store.delete_document(doc.id)
    maintain_entity_graph(store, hashing_embedder)
    assert not _has("Tyrion Lannister", store)
    names = store.runner.driver.execute_query(
        "MATCH (n:EntityName {namespace: $ns, key: 'tyrion lannister'}) RETURN n.support AS s",
        ns=store.namespace,
        database_=store.runner.database,
    ).records
    assert not names or names[0]["s"] == 0


def test_a_large_document_is_deleted_in_bounded_transactions(store, hashing_embedder, monkeypatch):
    import kgrag_neo4j.store.documents as store_documents

    _ingest(store, hashing_embedder, CORPUS)
    maintain_entity_graph(store, hashing_embedder, create=True)
    doc = next(d for d in store.list_documents() if d.source == "tyrion.txt")
    chunks = len(store.runner.read("entity_graph/document_chunks", namespace=store.namespace, document_ids=[doc.id])[0]["chunks"])
    assert chunks >= 2
    monkeypatch.setattr(store_documents, "LARGE_DOCUMENT_CHUNKS", 1)
    monkeypatch.setattr(store_documents, "STAGE_ROWS", 1)
    before = store.runner.round_trips
    assert store.delete_document(doc.id)
    assert store.runner.round_trips - before >= chunks + 2  # a transaction per chunk, then the park
    assert not store.delete_document(doc.id)
    parked = store.runner.driver.execute_query(
        "MATCH (c:Chunk) WHERE c.namespace STARTS WITH $p RETURN count(c) AS n",
        p="\x1f" + store.namespace,
        database_=store.runner.database,
    ).records[0]["n"]
    assert parked == 0
    maintain_entity_graph(store, hashing_embedder)
    assert not _has("Tyrion Lannister", store)
    _assert_equals_a_rebuild(store, hashing_embedder)


def test_documents_deleted_together_leave_the_graph_a_build_would_make(store, hashing_embedder, monkeypatch):
    import kgrag_neo4j.store.documents as store_documents

    _ingest(store, hashing_embedder, CORPUS)
    maintain_entity_graph(store, hashing_embedder, create=True)
    by_source = {d.source: d.id for d in store.list_documents()}
    # two small documents in one transaction, a third the way of a large one
    monkeypatch.setattr(store_documents, "LARGE_DOCUMENT_CHUNKS", 2)
    big = max(by_source, key=lambda s: len(CORPUS[s]))
    victims = [by_source["tyrion.txt"], by_source["jon.txt"], "doc_not_here", by_source[big]]
    assert store.delete_documents(victims) == [v for v in victims if v != "doc_not_here"]
    assert store.delete_documents(victims) == []
    left = {d.source for d in store.list_documents()}
    assert left == set(CORPUS) - {"tyrion.txt", "jon.txt", big}
    maintain_entity_graph(store, hashing_embedder)
    assert not _has("Tyrion Lannister", store)
    _assert_equals_a_rebuild(store, hashing_embedder)


def test_concurrent_ingests_into_one_namespace_end_linked(store, hashing_embedder):
    from concurrent.futures import ThreadPoolExecutor

    _ingest(store, hashing_embedder, {"seed.txt": "Ned Stark rode to Winterfell."})
    maintain_entity_graph(store, hashing_embedder, create=True)
    items = sorted(CORPUS.items())

    def one(item):
        _ingest(store, hashing_embedder, {item[0]: item[1]})
        maintain_entity_graph(store, hashing_embedder)

    with ThreadPoolExecutor(3) as pool:
        list(pool.map(one, items))
    state = store.entity_graph_state()
    assert state["documents"] == state["documents_linked"] == len(items) + 1
    # the same chunks built from scratch (descriptions follow the order chunks were stored in)
    got = _dump(store)
    maintain_entity_graph(store, hashing_embedder, rebuild=True)
    expect = _dump(store)
    for part in ("entities", "relations", "chunks"):
        diff = {
            k: (got[part].get(k), expect[part].get(k))
            for k in set(got[part]) | set(expect[part])
            if got[part].get(k) != expect[part].get(k)
        }
        assert not diff, (part, diff)


def _built_then_added(store: Neo4jStore, embedder, first: dict[str, str], then: dict[str, str]) -> None:
    """Ingest ``first`` and build its entity graph, then ingest ``then`` without linking it."""
    _ingest(store, embedder, first)
    maintain_entity_graph(store, embedder, create=True)
    _ingest(store, embedder, then)


def _maintain_as_another_ingest(store: Neo4jStore, embedder) -> None:
    """Maintain ``store``'s namespace through a store of its own, as a concurrent ingest would."""
    other = Neo4jStore(store.runner.driver, namespace=store.namespace, database=store.runner.database)
    maintain_entity_graph(other, embedder)


def test_marked_chunks_another_ingest_links_first_are_counted_once(store, hashing_embedder, monkeypatch):
    # another ingest's maintainer links the same marked chunks between this one's read and its
    # write: applied as computed, this one's difference would count the new co-occurrences twice
    _built_then_added(
        store,
        hashing_embedder,
        {"a.txt": "Arya Stark rode north with Jon Snow. Hodor. The giant held the door."},
        {"b.txt": "They called him Hodor at Winterfell."},
    )
    write = Neo4jStore.write_entity_links
    raced: list[bool] = []

    def racing(self, generation, links):
        if links.get("bases") and not raced:
            raced.append(True)
            _maintain_as_another_ingest(self, hashing_embedder)
        return write(self, generation, links)

    monkeypatch.setattr(Neo4jStore, "write_entity_links", racing)
    maintain_entity_graph(store, hashing_embedder)
    monkeypatch.undo()
    assert raced
    assert store.get_entity_by_name("Hodor", limit=5)[0].mention_total == 2
    _assert_equals_a_rebuild(store, hashing_embedder)


def test_an_update_read_before_another_ingest_settled_the_entities_is_not_written(store, hashing_embedder, monkeypatch):
    # two ingests read the same dirty entities; one writes its update first. A read that
    # overlapped that update may have seen an entity's source chunk half moved (here made
    # visible as a wrong description): written after it, it would replace a right one
    _built_then_added(
        store,
        hashing_embedder,
        {"a.txt": "Arya Stark rode north with Jon Snow."},
        {"b.txt": "Jon Snow went to the Wall. Hodor held the door at the Wall."},
    )
    update = Neo4jStore.update_maintained_entities
    raced: list[int] = []

    def racing(self, rows):
        if not raced:
            monkeypatch.setattr(Neo4jStore, "update_maintained_entities", update)
            _maintain_as_another_ingest(self, hashing_embedder)
            monkeypatch.setattr(Neo4jStore, "update_maintained_entities", racing)
            raced.append(len(rows))
            rows = [{**row, "description": "torn", "source_chunk_id": None} for row in rows]
        return update(self, rows)

    monkeypatch.setattr(Neo4jStore, "update_maintained_entities", racing)
    maintain_entity_graph(store, hashing_embedder)
    monkeypatch.undo()
    assert raced and raced[0] > 0
    got = _dump(store)
    assert not [k for k, e in got["entities"].items() if e[2] == "torn" or e[3] is None]
    assert got["entities"]["wall"][3] == "b.txt#0"
    _assert_equals_a_rebuild(store, hashing_embedder)


def test_a_difference_is_written_only_onto_the_links_it_was_taken_from(store, hashing_embedder):
    # a chunk written as a difference names the count of link writes it was read at; a chunk
    # written since (another ingest, another part) refuses it, and nothing is written
    _ingest(store, hashing_embedder, {"a.txt": "Arya Stark rode north with Jon Snow. Hodor. The giant held the door."})
    maintain_entity_graph(store, hashing_embedder, create=True)
    before = _dump(store)
    rows = store.runner.driver.execute_query(
        "MATCH (c:Chunk {namespace: $ns}) RETURN c.id AS id, coalesce(c.links_written, 0) AS n, c.pair_a AS a, c.pair_b AS b",
        ns=store.namespace,
        database_=store.runner.database,
    ).records
    chunk = next(r for r in rows if r["a"])
    links = {
        "entities": [],
        "mentions": [],
        "dropped": [],
        "pairs": [{"a": chunk["a"][0], "b": chunk["b"][0], "strength": 1000, "windows": 1}],
        "chunks": [],
        "unlink": [],
        "documents": [],
        "settled": [],
        "bases": {chunk["id"]: chunk["n"] + 1},
    }
    generation = store.entity_graph_generation()
    assert store.write_entity_links(generation, links) is False
    assert _dump(store) == before
    assert store.write_entity_links(generation, dict(links, bases={chunk["id"]: chunk["n"]})) is True
    assert _dump(store) != before


def test_replaced_then_deleted_text_is_not_searchable_through_entities(store, hashing_embedder):
    """Red-team finding: an old entity description (a secret phrase) stayed searchable after
    its document was replaced and deleted, and entities no chunk mentions stayed."""
    from kgrag_neo4j.retrieval.local_search import LocalSearchRetriever

    _ingest(store, hashing_embedder, {"keep.txt": "Ned Stark rode to Winterfell with Jon Snow."})
    _ingest(store, hashing_embedder, {"secret.txt": "Zorblax Quinn whispered the password swordfish to Ned Stark."})
    maintain_entity_graph(store, hashing_embedder, create=True)
    assert _has("Zorblax Quinn", store)
    ing = Ingestor(store, hashing_embedder, chunker=RecursiveChunker(max_tokens=16, overlap_tokens=0))
    ing.ingest_text("Arya Stark trained in Braavos.", source="secret.txt", title="secret.txt")  # replaced, kept current
    assert not _has("Zorblax Quinn", store)
    doc = next(d for d in store.list_documents() if d.source == "secret.txt")
    store.delete_document(doc.id)
    maintain_entity_graph(store, hashing_embedder)
    context = LocalSearchRetriever(store, hashing_embedder).context("password swordfish Zorblax")
    said = " ".join([e.description for e in context.entities] + [u.content for u in context.text_units])
    assert "swordfish" not in said and "Zorblax" not in said
    orphans = store.runner.driver.execute_query(
        "MATCH (e:Entity {namespace: $ns}) WHERE NOT EXISTS { (e)<-[:MENTIONS]-() } RETURN count(e) AS n",
        ns=store.namespace,
        database_=store.runner.database,
    ).records[0]["n"]
    assert orphans == 0
    ned = store.get_entity_by_name("Ned Stark", limit=5)[0]
    assert "swordfish" not in ned.entity.description
