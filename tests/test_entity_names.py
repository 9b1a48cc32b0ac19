"""The offline extractor's name rules, one table each: which capitalised words may be names,
which occurrences vouch for a name, the type the cues give, and the sentence that describes a
name. Pure: no server."""

from __future__ import annotations

import pytest

from kgrag_neo4j.entities.descriptions import describe_name
from kgrag_neo4j.entities.extract_offline import OfflineEntityExtractor
from kgrag_neo4j.entities.name_types import type_from_cues
from kgrag_neo4j.entities.name_words import is_name_word
from kgrag_neo4j.entities.names import name_type, scan_chunk
from kgrag_neo4j.types import Chunk


@pytest.mark.parametrize(
    "token, expect",
    [
        ("Neo4j", True),
        ("NASA", True),
        ("UTF-8", True),
        ("Klaus-Günter", True),
        ("Ms", True),  # an honorific, not the unit
        ("MATCH", False),  # Cypher keyword
        ("STRING", False),  # type name
        ("FOLDER", False),  # a usage line's placeholder
        ("CPU", False),  # abbreviation of a common noun
        ("MiB", False),  # unit
        ("RELATES_TO", False),  # identifier
        ("KGRAG_PORT", False),
        ("APIs", False),  # plural of an abbreviation
        ("MERGEd", False),  # a keyword with an English ending
        ("CPU-bound", False),  # compound ending in a lower-case word
        ("LLM-extracted", False),
        ("lucene", False),  # not capitalised
    ],
)
def test_is_name_word(token, expect):
    assert is_name_word(token) is expect


def supported(text: str, title: str = "") -> set[str]:
    """The names the scan puts in the vocabulary: written as a name, or the title."""
    return {s.key for s in scan_chunk("c", text, title_name=title).names if s.support + s.titles > 0}


@pytest.mark.parametrize(
    "text, title, names, not_names",
    [
        # capitalised by place: a sentence, a line, a table column, a colon
        ("It searched all segments. Asked for more, it took longer.", "", set(), {"asked"}),
        ("  --help      Show this message and exit.", "", set(), {"show"}),
        ("Commands:\n  ask          Answer a question", "", set(), {"answer"}),
        ("Columns: Refined seeds come first.", "", set(), {"refined"}),
        ("  --namespace TEXT  Tenant of the data", "", set(), {"text tenant", "tenant", "text"}),
        ("Print JSON\nfor every result", "", {"json"}, {"print json", "print"}),
        # a common word capitalised anywhere alone, or as emphasis
        ('the store ("Refined seeds" above) and the rest', "", set(), {"refined"}),
        ("He is also Story Writer, and lyricist.", "", set(), {"story writer"}),
        # what is no name: code, units, plurals and compounds of abbreviations
        ("MATCH (c) RETURN c ORDER BY c.id", "", set(), {"match", "return", "order by"}),
        ("edges of type RELATES_TO and IN_COMMUNITY here", "", set(), {"relates_to", "in_community"}),
        ("broken PDFs and two APIs; ingest is CPU-bound", "", set(), {"pdfs", "apis", "cpu-bound"}),
        ("both ends are MERGEd as nodes", "", set(), {"merged"}),
        ("and PARENT Leiden clusters", "", set(), {"parent leiden", "parent"}),
        # descriptions, not names: after "a", after a name's number
        ("the tower holds a Bell cast in Mexico City.", "", {"mexico city"}, {"bell"}),
        ("2 cores (Intel(R) Xeon(R) Processor) in use", "", {"intel"}, {"processor"}),
        ("landlocked countries are least developed countries (LDC) mostly", "", set(), {"ldc"}),
        ("the Family Research Institute (FRI) wrote", "", {"fri", "family research institute"}, set()),
        ("Tried first: a Split pre-tokenizer, no gain.", "", set(), {"split"}),
        ("It needs Neo4j 5.26 Community jars.", "", {"neo4j"}, {"community"}),
        # what stays a name
        ("Neo4j is a graph database.", "", {"neo4j"}, set()),  # software-shaped: a name anywhere
        ("Apple and Microsoft met. Later, Apple left.", "", {"apple", "microsoft"}, set()),
        ("Later NED  STARK rode north.", "", {"ned stark"}, set()),
        ("She studied at the University of Oxford.", "", {"university of oxford"}, set()),
        (
            "He married Berenice II of Egypt and Jesus of Nazareth spoke.",
            "",
            {"berenice ii of egypt", "jesus of nazareth"},
            set(),
        ),
        ("The Winter Olympics were held in St. Moritz that year.", "", {"st. moritz", "winter olympics"}, {"moritz"}),
        # two names side by side
        (
            "Then Atal Bihari Vajpayee of Bharatiya Janata Party won.",
            "",
            {"atal bihari vajpayee", "bharatiya janata party"},
            {"atal bihari vajpayee of bharatiya janata party"},
        ),
        (
            "an initiative of the Victorian Coalition Government Victorian Government that aims",
            "",
            {"victorian coalition government", "victorian government"},
            {"victorian coalition government victorian government"},
        ),
        # a title's own words are the title's
        ('Douche and Turd\n"Douche and Turd" is an episode.', "Douche and Turd", {"douche and turd"}, {"turd"}),
    ],
)
def test_which_occurrences_vouch_for_a_name(text, title, names, not_names):
    got = supported(text, title)
    assert names <= got, names - got
    assert not (not_names & got), not_names & got


@pytest.mark.parametrize(
    "name, cues, expect",
    [
        ("Neo4j", {"occurrences": 63, "location": 1, "weak": 2}, "OTHER"),  # software-shaped: no place
        ("Lucene", {"occurrences": 14, "location": 1, "weak": 1}, "OTHER"),  # one cue in fourteen
        ("Paris", {"occurrences": 3, "location": 1, "weak": 1}, "LOCATION"),
        ("Winterfell", {"occurrences": 2, "location": 1}, "LOCATION"),
        ("Python", {"occurrences": 10, "weak": 1}, "OTHER"),
        ("NASA", {"occurrences": 3}, "ORGANIZATION"),
        ("UTF-8", {"occurrences": 3}, "OTHER"),  # a standard, not an organisation
        ("BBC Radio", {"occurrences": 1}, "OTHER"),
        ("NED STARK", {"occurrences": 1}, "PERSON"),
        ("Ned Stark", {"occurrences": 2, "person": 1}, "PERSON"),
        ("Kenan Memorial Stadium", {"occurrences": 1}, "LOCATION"),
        ("Good Governance Day", {"occurrences": 1}, "OTHER"),
        ("Iowa State University", {"occurrences": 1}, "ORGANIZATION"),
    ],
)
def test_type_from_cues(name, cues, expect):
    assert type_from_cues(name, **cues) == expect
    assert name_type(name, cues) == expect  # the maintained graph's type is the same rule


TEXT = "Refined seeds\nGraph retrieval refines its seeds. Neo4j stores them.\n\nLater, the graph grows."


@pytest.mark.parametrize(
    "content, name, first, expect",
    [
        (TEXT, "Neo4j", TEXT.index("Neo4j"), "Neo4j stores them."),  # the sentence of the mention
        (TEXT, "Neo4j", -1, "Neo4j stores them."),  # no offset: the first sentence writing it
        (TEXT, "graph retrieval", -1, "Graph retrieval refines its seeds."),  # cut to its line
        (TEXT, "Refined seeds", 0, "Refined seeds"),  # a heading is its own line
        (TEXT, "Lucene", -1, "Refined seeds Graph retrieval refines its seeds."),  # not written: the first
        ("", "Neo4j", -1, ""),
        ("One. Two.", "two", 99, "Two."),  # an offset past the end: found by name
    ],
)
def test_describe_name(content, name, first, expect):
    assert describe_name(content, name, first) == expect


def test_describe_name_is_bounded():
    long = "Neo4j " + "word " * 200 + "end."
    out = describe_name(long, "Neo4j", 0, limit=50)
    assert len(out) == 50 and out.endswith("\u2026")


def test_the_extractor_keeps_no_code_and_describes_with_the_name():
    text = (
        "Cypher statements\n"
        "Every write file is idempotent: UNWIND $rows ... MERGE. A Browser user still writes MATCH (a) RETURN a.\n"
        "Refined seeds come first. The index is based in Lucene, which Neo4j embeds. "
        "Words are scored by Lucene, ranked by Lucene, cut by Lucene, kept by Lucene and read by Lucene."
    )
    result = OfflineEntityExtractor().extract([Chunk(id="c1", document_id="d", content=text, chunk_index=0)])
    got = {e.name: e for e in result.entities}
    assert not {"UNWIND", "MERGE", "MATCH", "RETURN", "Refined", "Cypher statements"} & set(got)
    assert got["Neo4j"].type == "OTHER" and got["Lucene"].type == "OTHER"
    assert got["Neo4j"].description == "The index is based in Lucene, which Neo4j embeds."
