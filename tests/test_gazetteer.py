"""The gazetteer pass of offline entity linking: names found wherever they are written, and
names taken from document titles. Pure: no server."""

from __future__ import annotations

import pytest

from kgrag_neo4j.entities.chunk_links import entity_chunk_edges, title_name
from kgrag_neo4j.entities.extract_offline import OfflineEntityExtractor
from kgrag_neo4j.entities.gazetteer import Gazetteer, fold, name_form
from kgrag_neo4j.errors import ConfigurationError
from kgrag_neo4j.types import Chunk


def found(names, text):
    return [(m.key, m.surface) for m in Gazetteer(names).find(text)]


@pytest.mark.parametrize(
    "names, text, expected",
    [
        # any case, the surface as written
        (["New York"], "from new york and NEW YORK", [("new york", "new york"), ("new york", "NEW YORK")]),
        # whole words only
        (["Art"], "Arthur made art.", [("art", "art")]),
        (["Ned"], "Nedda met Ned.", [("ned", "Ned")]),
        # whitespace runs and line breaks match one space
        (["New York"], "in New  York\nand New\tYork", [("new york", "New  York"), ("new york", "New\tYork")]),
        # the longest name wins; the shorter one inside it is not a second match
        (
            ["Robert", "Robert Baratheon"],
            "Robert Baratheon and Robert",
            [("robert baratheon", "Robert Baratheon"), ("robert", "Robert")],
        ),
        (["New York", "York City", "New York City"], "in New York City today", [("new york city", "New York City")]),
        # overlapping names: the longer, and of equal length the leftmost
        (["New York", "York City"], "New York City", [("york city", "York City")]),
        (["Port Ab", "Ab Cd"], "Port Ab Cd", [("port ab", "Port Ab")]),
        # possessives and punctuation around a name
        (["Ned Stark"], "Ned Stark's sword (Ned Stark).", [("ned stark", "Ned Stark"), ("ned stark", "Ned Stark")]),
        (["AT&T"], "at&t, AT&T!", [("at&t", "at&t"), ("at&t", "AT&T")]),
        # letters beyond ASCII, and a character whose lower case is longer keeps the offsets
        (["Zürich"], "ZÜRICH and zürich", [("zürich", "ZÜRICH"), ("zürich", "zürich")]),
        (["Izmir"], "İstanbul, then Izmir", [("izmir", "Izmir")]),
        # too short or without letters: never a name
        (["A", "42", "--"], "A 42 -- a", []),
        ([], "anything", []),
    ],
)
def test_gazetteer_matches(names, text, expected):
    assert found(names, text) == expected
    # a text writes one of the names exactly when it has a match among them
    assert Gazetteer(names).writes_any(text) is bool(expected)


@pytest.mark.parametrize(
    "names, text, writes",
    [
        (["Ned Stark"], "the key ned_stark is read", False),  # a full-text index splits at "_"
        (["Ned Stark"], "ned.stark", False),
        (["Ned Stark"], "NED   STARK rode", True),
        # found even where a longer name of a larger vocabulary would hide it
        (["York City"], "New York City", True),
        (["C--"], "the C-- compiler", True),
        (["C--"], "the C compiler", False),
    ],
)
def test_gazetteer_writes_any(names, text, writes):
    assert Gazetteer(names).writes_any(text) is writes


def test_gazetteer_offsets_point_into_the_original_text():
    text = "İİ then  New   York"
    (m,) = Gazetteer(["New York"]).find(text)
    assert text[m.start : m.end] == m.surface == "New   York"


def test_fold_keeps_length_and_name_form_is_stable():
    for text in ["İstanbul", "Straße", "ΣΑΣ", "ǅemal"]:
        assert len(fold(text)) == len(text)
    assert name_form("  New \n York ") == "new york" == name_form(name_form("New York"))


def chunk(cid, text, doc="d1"):
    return Chunk(id=cid, document_id=doc, content=text)


def entity_names(result):
    return {e.name: e.type for e in result.entities}


def mention_counts(result):
    names = {e.id: e.name for e in result.entities}
    out = {}
    for m in result.mentions:
        out[(m.chunk_id, names[m.entity_id])] = m.count
    return out


def test_extractor_finds_a_name_wherever_it_is_written():
    chunks = [chunk("c1", "Ned Stark rode north."), chunk("c2", "Songs of ned stark and NED STARK were sung.")]
    counts = mention_counts(OfflineEntityExtractor().extract(chunks))
    assert counts == {("c1", "Ned Stark"): 1, ("c2", "Ned Stark"): 2}


def test_extractor_takes_given_names_as_other_and_finds_them_lower_case():
    chunks = [chunk("c1", "The film was directed by shawn levy in 2020.")]
    result = OfflineEntityExtractor().extract(chunks, names=["Shawn Levy"])
    assert entity_names(result) == {"Shawn Levy": "OTHER"}
    assert mention_counts(result) == {("c1", "Shawn Levy"): 1}


def test_extractor_given_names_keep_a_type_the_text_gives():
    chunks = [chunk("c1", "Mr. Levy spoke. Then Shawn Levy left."), chunk("c2", "a film by shawn levy")]
    result = OfflineEntityExtractor().extract(chunks, names=["Shawn Levy"])
    assert entity_names(result)["Shawn Levy"] == "PERSON"
    assert mention_counts(result)[("c2", "Shawn Levy")] == 1


def test_extractor_common_word_names_count_only_capitalised():
    # "Bank" is a name in "Bank of Braavos"'s shadow only when capitalised; the corpus writes
    # "bank" in lower case more often, so lower-case "bank" is not a mention
    chunks = [
        chunk("c1", "They walked along the river bank. The bank was muddy."),
        chunk("c2", "Money came from Bank. The bank was closed."),
    ]
    counts = mention_counts(OfflineEntityExtractor().extract(chunks, names=["Bank"]))
    assert counts == {("c2", "Bank"): 1}


def test_extractor_resolves_short_forms_inside_a_document_only():
    chunks = [
        chunk("a1", "Robert Baratheon was king. Robert died at the hunt.", doc="a"),
        chunk("b1", "Robert laughed at Robert's jokes. Robert left.", doc="b"),
        chunk("c1", "Robert Baratheon and Robert Stark met. Robert smiled.", doc="c"),
    ]
    counts = mention_counts(OfflineEntityExtractor().extract(chunks))
    assert counts[("a1", "Robert Baratheon")] == 2  # "Robert" is short for him in document a
    assert ("a1", "Robert") not in counts
    assert counts[("b1", "Robert")] == 3  # no long form in document b
    assert counts[("c1", "Robert")] == 1  # ambiguous in document c: left alone
    assert counts[("c1", "Robert Baratheon")] == 1 and counts[("c1", "Robert Stark")] == 1


@pytest.mark.parametrize(
    "text, name, expected",
    [
        ("Scripts written in Python are common. Python is fast.", "Python", "OTHER"),
        ("The library is written in Python.", "Python", "OTHER"),
        ("They met in Lisbon. Years later in Lisbon they parted.", "Lisbon", "LOCATION"),
        ("She was born in Lisbon.", "Lisbon", "LOCATION"),
        ("We stayed in Paris for a week.", "Paris", "LOCATION"),
        ("Ships sailed near Braavos.", "Braavos", "LOCATION"),
    ],
)
def test_types_prefer_other_when_unsure(text, name, expected):
    assert entity_names(OfflineEntityExtractor().extract([chunk("c", text)]))[name] == expected


def test_about_links_the_first_chunk_to_its_title_name():
    chunks = [chunk("c1", "He was a Canadian film director."), chunk("c2", "Free Guy was directed by Shawn Levy.")]
    result = OfflineEntityExtractor().extract(chunks, names=["Shawn Levy"], about={"c1": "Shawn Levy"})
    counts = mention_counts(result)
    assert counts[("c1", "Shawn Levy")] == 1 and counts[("c2", "Shawn Levy")] == 1
    (levy,) = [e for e in result.entities if e.name == "Shawn Levy"]
    # first seen in the chunk that is about him: its opening sentence describes him
    assert levy.description == "He was a Canadian film director."


@pytest.mark.parametrize(
    "title, expected",
    [
        ("Shawn Levy.txt", "Shawn Levy"),
        ("Kiss and Tell (1945 film)", "Kiss and Tell"),
        ("Lilu (mythology).md", "Lilu"),
        ("shawn_levy.txt", "shawn levy"),
        ("notes.txt", ""),
        ("a.txt", ""),
        ("README.md", "README"),
        ("2019.txt", ""),
        ("How to configure the server for production use in a cluster", ""),
        ("(1945 film)", "(1945 film)"),
        ("", ""),
    ],
)
def test_title_name(title, expected):
    assert title_name(title) == expected


def test_entity_chunk_edges_weights_by_rarity_and_caps():
    mentions = {
        "c1": ["rare", "common"],
        "c2": ["rare", "common"],
        "c3": ["common", "three"],
        "c4": ["three"],
        "c5": ["three"],
    }
    edges = {
        (e.source_id, e.target_id): e.weight for e in entity_chunk_edges(mentions, max_chunks=3) if e.source_id < e.target_id
    }
    both = {(e.source_id, e.target_id) for e in entity_chunk_edges(mentions, max_chunks=3)}
    assert both == set(edges) | {(b, a) for a, b in edges}  # written both ways
    # "rare" (2 chunks) links c1-c2 at 1.0; "common" (3 chunks) adds 1/2 to each of its pairs;
    # "three" (3 chunks) likewise; c1-c2 is capped at 1.0
    assert edges == {
        ("c1", "c2"): 1.0,
        ("c1", "c3"): 0.5,
        ("c2", "c3"): 0.5,
        ("c3", "c4"): 0.5,
        ("c3", "c5"): 0.5,
        ("c4", "c5"): 0.5,
    }
    # an entity in more than max_chunks chunks links nothing
    assert {(e.source_id, e.target_id) for e in entity_chunk_edges(mentions, max_chunks=2)} == {("c1", "c2"), ("c2", "c1")}
    # each chunk keeps its heaviest edges; the pair survives if either end keeps it
    kept = {
        (e.source_id, e.target_id) for e in entity_chunk_edges(mentions, max_chunks=3, per_chunk=1) if e.source_id < e.target_id
    }
    assert ("c1", "c2") in kept and len(kept) < 6
    with pytest.raises(ConfigurationError):
        entity_chunk_edges(mentions, max_chunks=1)


def test_query_name_keys_are_word_runs_with_spans():
    from kgrag_neo4j.entities.gazetteer import query_name_keys

    keys = query_name_keys("Where was Ned Stark's sword forged?")
    as_tuples = {(k["key"], k["start"], k["end"]) for k in keys}
    assert ("ned stark", 2, 4) in as_tuples  # the possessive cut
    assert ("ned stark's", 2, 4) in as_tuples  # and as written
    assert ("sword forged?", 4, 6) not in as_tuples and ("sword forged", 4, 6) in as_tuples  # edge punctuation goes
    assert ("ned", 2, 3) in as_tuples and ("where was ned stark's sword forged", 0, 6) in as_tuples
    # bounded: a pasted page does not make the lookup unbounded
    assert len(query_name_keys("word " * 1000, max_keys=50)) == 50
    assert query_name_keys("") == [] and query_name_keys("?! ...") == []


def test_matches_keep_their_offsets_across_whitespace_runs():
    """Every match's span in the original text, wherever runs of whitespace were squeezed
    before matching: the surface squeezed and folded is the name."""
    import random
    import re

    from kgrag_neo4j.entities.gazetteer import fold

    rng = random.Random(11)
    names = ["New York", "York", "Ned Stark", "Stark", "Bank of Braavos", "Braavos"]
    gazetteer = Gazetteer(names)
    words = ["New", "York", "Ned", "Stark", "Bank", "of", "Braavos", "the", "river", "x"]
    for _ in range(300):
        parts = []
        for _ in range(rng.randint(1, 12)):
            parts.append(rng.choice(words))
            parts.append(rng.choice([" ", "  ", "\n", "\n\n ", "\t", " \r\n  ", ", "]))
        text = "".join(parts)
        found = gazetteer.find(text)
        for m in found:
            assert text[m.start : m.end] == m.surface
            assert re.sub(r"\s+", " ", fold(m.surface)) == m.key
        assert [m.start for m in found] == sorted(m.start for m in found)
