"""Entities without a database: names, ids, LLM extraction rules, offline extraction, resolution."""

from __future__ import annotations

import json
import logging
import threading
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kgrag_neo4j.entities import (
    CO_OCCURS,
    LLMEntityExtractor,
    OfflineEntityExtractor,
    cooccurrence_weight,
    merge_results,
    merge_similar_entities,
    parse_json_reply,
    remap_extraction,
)
from kgrag_neo4j.errors import (
    ConfigurationError,
    DimensionMismatchError,
    InputError,
    ProviderError,
    ProviderResponseError,
)
from kgrag_neo4j.types import Chunk
from kgrag_neo4j.types.entities import (
    Entity,
    EntityMention,
    EntityRelation,
    ExtractionResult,
    entity_id,
    normalise_name,
    normalise_type,
)


def chunk(cid: str, text: str) -> Chunk:
    return Chunk(id=cid, document_id="doc", content=text)


class ScriptedChat:
    """A ChatProvider whose replies come from a function of the prompt (thread-safe)."""

    def __init__(self, reply):
        self.reply = reply
        self.calls: list[list[dict[str, str]]] = []
        self._lock = threading.Lock()

    def chat(self, messages, *, json_schema=None):
        with self._lock:
            self.calls.append(list(messages))
        out = self.reply(messages) if callable(self.reply) else self.reply
        if isinstance(out, BaseException):
            raise out
        return out


def prompt_has(messages, chunk_id: str) -> bool:
    return f"[chunk_id: {chunk_id}]" in messages[-1]["content"]


# --- names and ids -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("Ned Stark", "ned stark"),
        ("  Ned \t\n  Stark  ", "ned stark"),
        ("The University of Oxford.", "university of oxford"),
        ("the  Wall", "wall"),
        ('"Winterfell"', "winterfell"),
        ("(NASA)", "nasa"),
        ("\uff2e\uff21\uff33\uff21", "nasa"),  # full-width letters: NFKC
        ("Stra\u00dfe", "strasse"),  # casefold, not lower
        ("C++", "c++"),  # symbols are not punctuation
        ("Theon Greyjoy", "theon greyjoy"),  # "the" only as a whole word
        ("...", ""),
        ("The", "the"),
    ],
)
def test_normalise_name(raw, expected):
    assert normalise_name(raw) == expected


@given(st.text(max_size=40))
def test_normalise_name_is_idempotent(text):
    once = normalise_name(text)
    assert normalise_name(once) == once


_words = st.lists(st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8), min_size=1, max_size=4)


@given(_words, st.sampled_from(["PERSON", "person", "Person", " person "]))
def test_entity_id_ignores_spelling_noise(words, type_):
    plain = " ".join(words)
    noisy = "The  " + "   ".join(w.upper() for w in words) + " ."
    if plain.startswith("the "):  # a leading "the" is itself dropped; keep the test honest
        return
    assert entity_id("ns", plain, "PERSON") == entity_id("ns", noisy, type_)


def test_entity_id_is_stable_across_documents_and_distinguishes_type_and_namespace():
    extractor = OfflineEntityExtractor()
    a = extractor.extract([chunk("doc1-c0", "He met Ned Stark near the gate.")])
    b = extractor.extract([chunk("doc2-c7", "Later NED  STARK rode north.")])
    (ea,), (eb,) = a.entity_by_name("Ned Stark"), b.entity_by_name("ned stark")
    assert ea.id == eb.id == entity_id("default", "Ned Stark", "PERSON")
    assert entity_id("default", "Ned Stark", "PERSON") != entity_id("default", "Ned Stark", "LOCATION")
    assert entity_id("default", "Ned Stark", "PERSON") != entity_id("other", "Ned Stark", "PERSON")
    assert entity_id("default", "ab c", "X") != entity_id("default", "a bc", "X")


def test_entity_id_rejects_a_name_that_normalises_to_nothing():
    with pytest.raises(InputError, match="empty"):
        entity_id("default", " !? ", "PERSON")


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("person", "PERSON"),
        ("Organisation", "ORGANIZATION"),
        ("org", "ORGANIZATION"),
        ("noble house", "NOBLE_HOUSE"),
        ("  geo-political entity ", "GEO_POLITICAL_ENTITY"),
        ("GPE", "LOCATION"),
        ("", "OTHER"),
        (None, "OTHER"),
        ("Caf\u00e9", "CAFE"),
    ],
)
def test_normalise_type(raw, expected):
    assert normalise_type(raw) == expected


@pytest.mark.parametrize("weight", [-0.1, 1.01, float("nan"), True, "0.5"])
def test_relation_weight_must_be_a_number_in_unit_interval(weight):
    with pytest.raises(InputError, match="weight"):
        EntityRelation("a", "b", "ALLY", weight)


def test_entity_type_is_normalised_on_construction():
    assert Entity(id="x", name="Ned", type="person").type == "PERSON"


def test_merge_results_rules_and_idempotence():
    e_short = Entity.create("Robert Baratheon", "PERSON", description="King.", source_chunk_id="c1")
    e_long = Entity.create("robert baratheon", "person", description="King of the Seven Kingdoms.", source_chunk_id="c2")
    ned = Entity.create("Ned Stark", "PERSON", source_chunk_id="c1")
    r1 = ExtractionResult(
        entities=(e_short, ned),
        relations=(EntityRelation(ned.id, e_short.id, "ALLY", 0.4, "friends"),),
        mentions=(EntityMention("c1", e_short.id, 2),),
    )
    r2 = ExtractionResult(
        entities=(e_long,),
        relations=(EntityRelation(ned.id, e_short.id, "ALLY", 0.9),),
        mentions=(EntityMention("c2", e_long.id, 1), EntityMention("c1", e_short.id, 1)),
    )
    merged = merge_results([r1, r2])
    robert = next(e for e in merged.entities if e.id == e_short.id)
    assert robert.description == "King of the Seven Kingdoms."
    assert robert.source_chunk_id == "c1"  # first seen wins
    (rel,) = merged.relations
    assert rel.weight == 0.9 and rel.description == "friends"
    assert {(m.chunk_id, m.count) for m in merged.mentions} == {("c1", 2), ("c2", 1)}
    assert merge_results([merged, merged]) == merged


# --- LLM extraction ------------------------------------------------------------------------

CHUNKS = [
    chunk("c1", "Ned Stark rode to Winterfell with Robert Baratheon. Ned Stark was tired."),
    chunk("c2", "Robert Baratheon was crowned king. Jon Arryn advised him."),
]


def reply(entities=(), relationships=()):
    return json.dumps({"entities": list(entities), "relationships": list(relationships)})


def ent(name, type_="PERSON", chunk_ids=("c1",), description=""):
    return {"name": name, "type": type_, "description": description, "chunk_ids": list(chunk_ids)}


def rel(source, target, strength=0.8, type_="ALLY", description=""):
    out = {"source": source, "target": target, "type": type_, "description": description}
    if strength is not ...:
        out["strength"] = strength
    return out


def test_llm_extraction_builds_entities_mentions_and_relations():
    chat = ScriptedChat(
        reply(
            [
                ent("Ned Stark", chunk_ids=["c1"], description="Lord of Winterfell."),
                ent("Robert Baratheon", chunk_ids=["c1", "c2"]),
                ent("Winterfell", "location", chunk_ids=["c1"]),
            ],
            [rel("Ned Stark", "Robert Baratheon", 0.9, "ally"), rel("Ned Stark", "Winterfell", 0.7, "lives in")],
        )
    )
    result = LLMEntityExtractor(chat, batch_size=5).extract(CHUNKS)
    assert len(chat.calls) == 1 and chat.calls[0][0]["role"] == "system"
    assert {(e.name, e.type) for e in result.entities} == {
        ("Ned Stark", "PERSON"),
        ("Robert Baratheon", "PERSON"),
        ("Winterfell", "LOCATION"),
    }
    ids = {e.name: e.id for e in result.entities}
    assert ids["Ned Stark"] == entity_id("default", "ned stark", "PERSON")
    mentions = {(m.chunk_id, m.entity_id): m.count for m in result.mentions}
    assert mentions == {
        ("c1", ids["Ned Stark"]): 2,
        ("c1", ids["Robert Baratheon"]): 1,
        ("c2", ids["Robert Baratheon"]): 1,
        ("c1", ids["Winterfell"]): 1,
    }
    rels = {(r.source_id, r.target_id, r.type): r.weight for r in result.relations}
    assert rels == {
        (ids["Ned Stark"], ids["Robert Baratheon"], "ALLY"): 0.9,
        (ids["Ned Stark"], ids["Winterfell"], "LIVES_IN"): 0.7,
    }
    assert next(e for e in result.entities if e.name == "Ned Stark").description == "Lord of Winterfell."
    assert result.dropped == {}


KNOWN = Entity.create("Cersei Lannister", "PERSON")


@pytest.mark.parametrize(
    "entities, relationships, expect_entities, expect_relations, expect_dropped",
    [
        pytest.param([ent("")], [], set(), set(), {"empty_name": 1}, id="empty-name"),
        pytest.param([ent(" ... ")], [], set(), set(), {"empty_name": 1}, id="punctuation-name"),
        pytest.param([{"type": "PERSON"}], [], set(), set(), {"empty_name": 1}, id="missing-name"),
        pytest.param(["Ned Stark"], [], set(), set(), {"malformed": 1}, id="entity-not-object"),
        pytest.param(
            [ent("Ned Stark", chunk_ids=["c1", "c99"])],
            [],
            {"Ned Stark"},
            set(),
            {"unknown_chunk": 1},
            id="unknown-chunk-dropped",
        ),
        pytest.param(
            [ent("Jon Arryn", chunk_ids=["nope"])],
            [],
            {"Jon Arryn"},
            set(),
            {"unknown_chunk": 1},
            id="unknown-chunk-grounded-by-text",
        ),
        pytest.param(
            [ent("Tyrion Lannister", chunk_ids=["nope"])],
            [],
            set(),
            set(),
            {"unknown_chunk": 1, "ungrounded": 1},
            id="ungrounded",
        ),
        pytest.param(
            [ent("Ned Stark")],
            [rel("Ned Stark", "Arya Stark")],
            {"Ned Stark"},
            set(),
            {"unknown_endpoint": 1},
            id="unknown-endpoint",
        ),
        pytest.param(
            [ent("Ned Stark")],
            [rel("Ned Stark", "the NED STARK")],
            {"Ned Stark"},
            set(),
            {"self_relation": 1},
            id="self-relation",
        ),
        pytest.param(
            [ent("Ned Stark"), ent("Robert Baratheon")],
            [rel("Ned Stark", "Robert Baratheon", 1.5)],
            {"Ned Stark", "Robert Baratheon"},
            set(),
            {"bad_strength": 1},
            id="strength-above-one",
        ),
        pytest.param(
            [ent("Ned Stark"), ent("Robert Baratheon")],
            [rel("Ned Stark", "Robert Baratheon", -0.2)],
            {"Ned Stark", "Robert Baratheon"},
            set(),
            {"bad_strength": 1},
            id="strength-negative",
        ),
        pytest.param(
            [ent("Ned Stark"), ent("Robert Baratheon")],
            [rel("Ned Stark", "Robert Baratheon", "strong")],
            {"Ned Stark", "Robert Baratheon"},
            set(),
            {"bad_strength": 1},
            id="strength-not-number",
        ),
        pytest.param(
            [ent("Ned Stark"), ent("Robert Baratheon")],
            [rel("Ned Stark", "Robert Baratheon", "0.4")],
            {"Ned Stark", "Robert Baratheon"},
            {("Ned Stark", "Robert Baratheon", 0.4)},
            {},
            id="strength-numeric-string",
        ),
        pytest.param(
            [ent("Ned Stark"), ent("Robert Baratheon")],
            [rel("Ned Stark", "Robert Baratheon", ...)],
            {"Ned Stark", "Robert Baratheon"},
            {("Ned Stark", "Robert Baratheon", 1.0)},
            {},
            id="strength-missing-defaults-to-one",
        ),
        pytest.param(
            [ent("Ned Stark")],
            [rel("Ned Stark", "cersei lannister", 0.3)],
            {"Ned Stark"},
            {("Ned Stark", "Cersei Lannister", 0.3)},
            {},
            id="known-entity-endpoint",
        ),
    ],
)
def test_llm_validation_rules(entities, relationships, expect_entities, expect_relations, expect_dropped):
    chat = ScriptedChat(reply(entities, relationships))
    result = LLMEntityExtractor(chat).extract(CHUNKS, known_entities=[KNOWN])
    assert {e.name for e in result.entities} == expect_entities
    names = {e.id: e.name for e in (*result.entities, KNOWN)}
    assert {(names[r.source_id], names[r.target_id], r.weight) for r in result.relations} == expect_relations
    assert dict(result.dropped) == expect_dropped
    for m in result.mentions:
        assert m.chunk_id in {"c1", "c2"}
    if "Jon Arryn" in expect_entities:  # grounded by searching the text: only c2 says it
        assert {m.chunk_id for m in result.mentions} == {"c2"}


@pytest.mark.parametrize(
    "text",
    [
        '```json\n{"entities": [], "relationships": []}\n```',
        'Here you go:\n```\n{"entities": [], "relationships": []}\n```\nAnything else?',
        'Sure! {"entities": [], "relationships": []} Hope that helps.',
        '{"entities": [], "relationships": []}',
    ],
)
def test_parse_json_reply_tolerates_fences_and_prose(text):
    assert parse_json_reply(text) == {"entities": [], "relationships": []}


@pytest.mark.parametrize("text", ["", "no json here", "```json\n{broken\n```"])
def test_parse_json_reply_rejects_non_json(text):
    with pytest.raises(ProviderResponseError, match="not JSON"):
        parse_json_reply(text)


def test_llm_fenced_reply_is_accepted():
    body = reply([ent("Ned Stark")])
    result = LLMEntityExtractor(ScriptedChat(f"```json\n{body}\n```")).extract(CHUNKS)
    assert [e.name for e in result.entities] == ["Ned Stark"]


@pytest.mark.parametrize(
    "bad_reply",
    [
        ProviderError("HTTP 500"),
        RuntimeError("socket closed"),  # a provider that leaks a raw exception
        "I cannot help with that.",
        '["not", "an", "object"]',
        '{"entities": "Ned", "relationships": []}',
    ],
)
def test_llm_failing_batch_is_logged_and_skipped(bad_reply, caplog):
    def answer(messages):
        if prompt_has(messages, "c2"):
            return bad_reply
        return reply([ent("Ned Stark")])

    extractor = LLMEntityExtractor(ScriptedChat(answer), batch_size=1, workers=2)
    with caplog.at_level(logging.WARNING, logger="kgrag_neo4j.entities.extract_llm"):
        result = extractor.extract(CHUNKS)
    assert [e.name for e in result.entities] == ["Ned Stark"]
    assert result.dropped == {"failed_batch": 1}
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "c2" in warnings[0].getMessage()


def test_llm_duplicates_across_batches_merge():
    def answer(messages):
        if prompt_has(messages, "c1"):
            return reply(
                [ent("Ned Stark"), ent("Robert Baratheon", chunk_ids=["c1"], description="A friend.")],
                [rel("Ned Stark", "Robert Baratheon", 0.4)],
            )
        return reply(
            [
                ent("ROBERT BARATHEON", chunk_ids=["c2"], description="King of the Andals and the First Men."),
                ent("Ned Stark", chunk_ids=["c2"]),
            ],
            [rel("ned stark", "Robert Baratheon", 0.9)],
        )

    result = LLMEntityExtractor(ScriptedChat(answer), batch_size=1, workers=2).extract(CHUNKS)
    robert = [e for e in result.entities if normalise_name(e.name) == "robert baratheon"]
    assert len(robert) == 1
    assert robert[0].description == "King of the Andals and the First Men."
    assert robert[0].source_chunk_id == "c1"
    assert {m.chunk_id for m in result.mentions if m.entity_id == robert[0].id} == {"c1", "c2"}
    (relation,) = result.relations
    assert relation.weight == 0.9


def test_llm_result_does_not_depend_on_workers():
    def answer(messages):
        time.sleep(0.01 if prompt_has(messages, "c1") else 0)  # the first batch finishes last
        cid = "c1" if prompt_has(messages, "c1") else "c2"
        return reply([ent("Robert Baratheon", chunk_ids=[cid], description=f"seen in {cid}")])

    serial = LLMEntityExtractor(ScriptedChat(answer), batch_size=1, workers=1).extract(CHUNKS)
    parallel = LLMEntityExtractor(ScriptedChat(answer), batch_size=1, workers=4).extract(CHUNKS)
    assert serial == parallel
    assert serial.entities[0].description == "seen in c1"  # tie on length: first batch wins


def test_llm_batches_and_prompt_contents():
    chat = ScriptedChat(reply())
    chunks = [chunk(f"c{i}", f"Text number {i}.") for i in range(7)]
    LLMEntityExtractor(chat, batch_size=3, workers=1).extract(chunks, known_entities=[KNOWN])
    assert len(chat.calls) == 3
    assert [sum(prompt_has(call, f"c{i}") for i in range(7)) for call in chat.calls] == [3, 3, 1]
    assert "Cersei Lannister" in chat.calls[0][-1]["content"]


@pytest.mark.parametrize("kwargs", [{"batch_size": 0}, {"workers": 0}, {"batch_size": True}])
def test_llm_extractor_rejects_bad_options(kwargs):
    with pytest.raises(ConfigurationError):
        LLMEntityExtractor(ScriptedChat(reply()), **kwargs)


# --- offline extraction --------------------------------------------------------------------

FIXTURE = (
    "Ned Stark is the Lord of Winterfell. He rode south with Robert Baratheon, the king, "
    "to meet Jon Arryn. In Winterfell, Catelyn Stark waited for news from Robert Baratheon."
)


def test_offline_fixture_entities_exactly():
    result = OfflineEntityExtractor().extract([chunk("c1", FIXTURE)])
    assert [(e.name, e.type) for e in result.entities] == [
        ("Ned Stark", "PERSON"),
        ("Winterfell", "LOCATION"),
        ("Robert Baratheon", "PERSON"),
        ("Jon Arryn", "PERSON"),
        ("Catelyn Stark", "PERSON"),
    ]
    counts = {next(e.name for e in result.entities if e.id == m.entity_id): m.count for m in result.mentions}
    assert counts == {"Ned Stark": 1, "Winterfell": 2, "Robert Baratheon": 2, "Jon Arryn": 1, "Catelyn Stark": 1}
    winterfell = result.entity_by_name("Winterfell")[0]
    assert winterfell.description == "Ned Stark is the Lord of Winterfell."
    assert winterfell.source_chunk_id == "c1"
    assert winterfell.id == entity_id("default", "Winterfell", "LOCATION")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("She studied at the University of Oxford last year.", {("University of Oxford", "ORGANIZATION")}),
        ("Funding came from NASA and the ESA.", {("NASA", "ORGANIZATION"), ("ESA", "ORGANIZATION")}),
        ("Winter is coming. Nobody listened.", set()),
        ("Apple and Microsoft met.", {("Microsoft", "OTHER")}),
        ("Apple and Microsoft met. Later, Apple left.", {("Apple", "OTHER"), ("Microsoft", "OTHER")}),
        ("They played Ludwig van Beethoven all night.", {("Ludwig van Beethoven", "PERSON")}),
        ("The letter reached Mr. Smith late.", {("Smith", "PERSON")}),
        ("They sailed to King's Landing at dawn.", {("King's Landing", "OTHER")}),
        ("When Ned Stark's son arrived, he wept.", {("Ned Stark", "PERSON")}),
        ("King Robert Baratheon smiled at Robert Baratheon.", {("Robert Baratheon", "PERSON")}),
        ("Boats crossed the River Thames daily.", {("River Thames", "LOCATION")}),
        ("He sold shares of Acme Inc today.", {("Acme Inc", "ORGANIZATION")}),
        ("We stayed in Paris for a week.", {("Paris", "LOCATION")}),
        ("He lives in the North now.", {("North", "LOCATION")}),
        ("Doctor notes: ask Dr. Watson first.", {("Watson", "PERSON")}),
        ("He drew Excalibur from the stone.", {("Excalibur", "OTHER")}),
        ("It happened in March, on a Monday.", set()),
        ("I think you and I agree.", set()),
        ("Ned Stark, Lord of Winterfell, spoke.", {("Ned Stark", "PERSON"), ("Winterfell", "LOCATION")}),
        ("Visitors from New York arrived.", {("New York", "LOCATION")}),
    ],
)
def test_offline_phrases_and_types(text, expected):
    result = OfflineEntityExtractor().extract([chunk("c", text)])
    assert {(e.name, e.type) for e in result.entities} == expected


def test_offline_dates_are_optional():
    text = "In 1861 the war began. It ended in 1865. Version 2.1999 and 1,2000 are no years."
    assert OfflineEntityExtractor().extract([chunk("c", text)]).entities == ()
    with_dates = OfflineEntityExtractor(include_dates=True).extract([chunk("c", text)])
    assert {(e.name, e.type) for e in with_dates.entities} == {("1861", "DATE"), ("1865", "DATE")}


def names_by_id(result):
    return {e.id: e.name for e in result.entities}


def test_offline_cooccurrence_weights_closeness_and_count():
    chunks = [
        chunk("c1", "Ned Stark met Robert Baratheon at dawn."),
        chunk("c2", "Later, Ned Stark and Robert Baratheon met Jon Arryn."),
        chunk("c3", "Only Jon Arryn came."),
    ]
    result = OfflineEntityExtractor().extract(chunks)
    names = names_by_id(result)
    got = {
        frozenset((names[r.source_id], names[r.target_id])): (round(r.weight, 4), r.metadata["count"]) for r in result.relations
    }
    # closeness 1 / (1 + gap / 10), strength summed over sentences, weight s / (s + 1):
    # Ned-Robert: one word apart twice -> s = 2 / 1.1 = 1.818 -> 0.6452
    # Ned-Jon: "and Robert Baratheon met" (4 words) -> s = 1 / 1.4 = 0.714 -> 0.4167
    # Robert-Jon: "met" (1 word) -> s = 0.909 -> 0.4762
    assert got == {
        frozenset({"Ned Stark", "Robert Baratheon"}): (0.6452, 2),
        frozenset({"Ned Stark", "Jon Arryn"}): (0.4167, 1),
        frozenset({"Robert Baratheon", "Jon Arryn"}): (0.4762, 1),
    }
    for r in result.relations:
        assert r.type == CO_OCCURS and r.source_id < r.target_id and r.metadata["window"] == "sentence"


def test_offline_cooccurrence_is_not_a_chunk_clique():
    # ten names in one chunk, one per sentence: no pair shares a sentence, so no relation
    people = [
        "Ned Stark",
        "Jon Arryn",
        "Robert Baratheon",
        "Catelyn Stark",
        "Tywin Lannister",
        "Lysa Arryn",
        "Jaime Lannister",
        "Sansa Stark",
        "Arya Stark",
        "Bran Stark",
    ]
    text = " ".join(f"{p} arrived late." for p in people)
    result = OfflineEntityExtractor().extract([chunk("c", text)])
    assert len(result.entities) == 10
    assert result.relations == ()
    # the chunk window (the old behaviour, on request) makes the clique: 45 pairs
    assert len(OfflineEntityExtractor(window="chunk").extract([chunk("c", text)]).relations) == 45


def test_offline_cooccurrence_max_gap():
    text = "Ned Stark " + "spoke at length " * 12 + "with Jon Arryn."
    assert OfflineEntityExtractor().extract([chunk("c", text)]).relations == ()
    assert len(OfflineEntityExtractor(max_gap=40).extract([chunk("c", text)]).relations) == 1


def test_offline_cooccurrence_sentence_window():
    text = "Ned Stark met Robert Baratheon. Jon Arryn slept. Ned Stark thanked Robert Baratheon."
    result = OfflineEntityExtractor(window="sentence").extract([chunk("c", text)])
    names = names_by_id(result)
    pairs = {frozenset((names[r.source_id], names[r.target_id])): r.metadata["count"] for r in result.relations}
    assert pairs == {frozenset({"Ned Stark", "Robert Baratheon"}): 2}


@given(st.integers(min_value=1, max_value=10_000))
def test_cooccurrence_weight_is_in_unit_interval_and_increasing(count):
    w = cooccurrence_weight(count)
    assert 0.5 <= w < 1.0
    assert cooccurrence_weight(count + 1) > w


def test_offline_min_mentions_and_max_entities_per_chunk():
    text = "Ned Stark met Jon Arryn. Ned Stark left. Ned Stark and Robert Baratheon laughed. Robert Baratheon won."
    result = OfflineEntityExtractor(min_mentions=2).extract([chunk("c", text)])
    assert {e.name for e in result.entities} == {"Ned Stark", "Robert Baratheon"}
    top = OfflineEntityExtractor(max_entities_per_chunk=1).extract([chunk("c", text)])
    assert [e.name for e in top.entities] == ["Ned Stark"]
    assert top.relations == ()


def test_offline_known_entities_pin_type_and_id():
    known = Entity.create("Winterfell", "CASTLE", namespace="default")
    result = OfflineEntityExtractor().extract([chunk("c", "He rode to Winterfell today.")], known_entities=[known])
    (e,) = result.entities
    assert (e.id, e.type) == (known.id, "CASTLE")


def test_offline_is_deterministic_and_fast():
    people = ["Ned Stark", "Robert Baratheon", "Jon Arryn", "Catelyn Stark", "Tywin Lannister", "Lysa Arryn"]
    places = ["Winterfell", "Riverrun", "Casterly Rock", "the Eyrie"]
    paragraphs = [
        chunk(
            f"p{i}",
            f"In {places[i % 4]}, {people[i % 6]} wrote to {people[(i + 1) % 6]} about the University of "
            f"Oxford and NASA. {people[(i + 2) % 6]} answered after {i % 7 + 1} days. The weather was cold "
            f"and the roads were long, but {people[i % 6]} did not complain.",
        )
        for i in range(3000)
    ]
    extractor = OfflineEntityExtractor()
    started = time.perf_counter()
    first = extractor.extract(paragraphs)
    elapsed = time.perf_counter() - started
    assert elapsed < 10.0, f"offline extraction of 3000 paragraphs took {elapsed:.1f}s"
    assert first == extractor.extract(paragraphs)
    assert {e.name for e in first.entities} >= set(people[:5]) | {"Winterfell", "NASA", "University of Oxford"}
    assert len(first.mentions) >= 3000 * 5


@pytest.mark.parametrize("kwargs", [{"window": "paragraph"}, {"min_mentions": 0}, {"max_entities_per_chunk": -1}])
def test_offline_rejects_bad_options(kwargs):
    with pytest.raises(ConfigurationError):
        OfflineEntityExtractor(**kwargs)


# --- resolution ----------------------------------------------------------------------------


def test_merge_similar_entities_same_type_transitively():
    a = Entity.create("Ned Stark", "PERSON")
    b = Entity.create("Eddard Stark", "PERSON")
    c = Entity.create("Lord Eddard", "PERSON")
    d = Entity.create("Stark", "LOCATION")  # same vector, other type: never merged
    e = Entity.create("Robert", "PERSON")
    vectors = {
        a.id: [1.0, 0.0, 0.0],
        b.id: [0.95, 0.31, 0.0],
        c.id: [0.81, 0.59, 0.0],
        d.id: [1.0, 0.0, 0.0],
        e.id: [0.0, 0.0, 1.0],
    }
    mapping = merge_similar_entities([a, b, c, d, e], vectors, threshold=0.94)
    canonical = min(a.id, b.id, c.id)
    # a~b (0.95) and b~c (0.95) merge a, b, c although a~c is only 0.81
    assert {mapping[a.id], mapping[b.id], mapping[c.id]} == {canonical}
    assert mapping[d.id] == d.id and mapping[e.id] == e.id
    shuffled = merge_similar_entities([e, d, c, b, a], vectors, threshold=0.94)
    assert shuffled == mapping


def test_merge_similar_entities_input_forms_and_errors():
    a = Entity.create("A one", "PERSON", embedding=[1.0, 0.0])
    b = Entity.create("A two", "PERSON", embedding=[1.0, 0.01])
    c = Entity.create("No vector", "PERSON")
    assert merge_similar_entities([a, b, c])[b.id] == min(a.id, b.id)
    assert merge_similar_entities([a, b, c], [[1, 0], [0, 1], None]) == {a.id: a.id, b.id: b.id, c.id: c.id}
    with pytest.raises(InputError, match="embeddings for"):
        merge_similar_entities([a, b], [[1, 0]])
    with pytest.raises(DimensionMismatchError):
        merge_similar_entities([a, b], [[1, 0], [1, 0, 0]])
    with pytest.raises(InputError, match="threshold"):
        merge_similar_entities([a], threshold=1.5)


def test_remap_extraction_repoints_and_drops_new_self_relations():
    ned = Entity.create("Ned Stark", "PERSON", description="Lord.", source_chunk_id="c1")
    eddard = Entity.create("Eddard Stark", "PERSON", description="Lord of Winterfell.", source_chunk_id="c2")
    robert = Entity.create("Robert", "PERSON", source_chunk_id="c1")
    result = ExtractionResult(
        entities=(ned, eddard, robert),
        relations=(
            EntityRelation(ned.id, eddard.id, "SAME", 0.5),
            EntityRelation(eddard.id, robert.id, "ALLY", 0.7),
            EntityRelation(ned.id, robert.id, "ALLY", 0.9),
        ),
        mentions=(EntityMention("c1", ned.id, 2), EntityMention("c1", eddard.id, 1), EntityMention("c2", eddard.id, 1)),
    )
    keep = min(ned.id, eddard.id)
    out = remap_extraction(result, {ned.id: keep, eddard.id: keep, robert.id: robert.id})
    assert {e.id for e in out.entities} == {keep, robert.id}
    merged = next(e for e in out.entities if e.id == keep)
    assert merged.description == "Lord of Winterfell."
    assert [(r.source_id, r.target_id, r.weight) for r in out.relations] == [(keep, robert.id, 0.9)]
    assert {(m.chunk_id, m.entity_id, m.count) for m in out.mentions} == {("c1", keep, 3), ("c2", keep, 1)}
