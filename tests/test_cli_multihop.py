"""The multi-hop pipeline through the CLI: ingest a folder, ``entities build`` (names from
titles and a user's list, entity edges), ``edges build --entity-edges``, and the search modes
that use the graph (graph, ppr, local with its whole context)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from kgrag_neo4j.cli import cli

PAPERS = {
    "Free Guy.txt": "Free Guy is a 2021 action comedy film directed by Shawn Levy. It stars Ryan Reynolds.",
    "Shawn Levy.txt": "Shawn Levy is a Canadian film director and producer, born in Montreal in 1968.",
    "Montreal.txt": "Montreal is the largest city of Quebec, on an island in the Saint Lawrence River.",
    "Gardening.txt": "Water the roses in the morning and prune the hedge in early spring, as monty don advises.",
}


@pytest.fixture
def kgrag(neo4j_settings, schema_ready, namespace):
    def invoke(*args: str):
        base = ["--uri", neo4j_settings.uri, "--user", neo4j_settings.user]
        if neo4j_settings.password:
            base += ["--password", neo4j_settings.password]
        result = CliRunner().invoke(cli, base + list(args) + ["--namespace", namespace])
        if result.exception and not isinstance(result.exception, SystemExit):
            raise result.exception
        return result.exit_code, result.stdout, result.stderr

    return invoke


@pytest.fixture
def built(kgrag, tmp_path):
    folder = tmp_path / "papers"
    folder.mkdir()
    for name, text in PAPERS.items():
        (folder / name).write_text(text)
    names = tmp_path / "names.txt"
    names.write_text("# people the text may write in lower case\nMonty Don\n")
    code, out, err = kgrag("ingest", str(folder), "--embedder", "hashing")
    assert code == 0, err
    code, out, err = kgrag("entities", "build", "--embedder", "hashing", "--names", str(names), "--json")
    assert code == 0, err
    return json.loads(out)


def test_entities_build_links_chunks_through_shared_names(built, kgrag):
    # Shawn Levy (Free Guy + his own paper) and Montreal (his paper + its own) link chunks
    assert built["entity_edges"] >= 4
    code, out, _ = kgrag("entities", "list", "--json")
    names = {e["name"] for e in json.loads(out)}
    # "Monty Don" comes from the --names file: the text only writes it in lower case
    assert {"Free Guy", "Shawn Levy", "Montreal", "Ryan Reynolds", "Monty Don"} <= names
    # rebuilding replaces the entity edges instead of adding to them
    code, out, _ = kgrag(
        "edges", "build", "--embedder", "hashing", "--no-sequence", "--no-similarity", "--entity-edges", "--json"
    )
    assert code == 0 and json.loads(out)["entity_edges"] == built["entity_edges"]


def test_graph_and_ppr_modes_reach_the_second_hop(built, kgrag):
    for mode in ("graph", "ppr"):
        code, out, err = kgrag(
            "search",
            "Where was the director of Free Guy born?",
            "--mode",
            mode,
            "--top-k",
            "3",
            "--embedder",
            "hashing",
            "--json",
        )
        assert code == 0, err
        results = json.loads(out)["results"]
        sources = [r["source"].rsplit("/", 1)[-1] for r in results]
        assert "Shawn Levy.txt" in sources, (mode, sources)
        hit = results[sources.index("Shawn Levy.txt")]
        assert hit["graph_context"] or hit["explanation"], mode


def test_local_mode_prints_the_whole_context(built, kgrag):
    code, out, err = kgrag(
        "search", "Shawn Levy films", "--mode", "local", "--embedder", "hashing", "--json", "--top-k-text-units", "2"
    )
    assert code == 0, err
    body = json.loads(out)
    assert {"entities", "relationships", "reports", "text_units", "results"} <= set(body)
    assert body["entities"] and len(body["text_units"]) <= 2
    code, text, _ = kgrag("search", "Shawn Levy films", "--mode", "local", "--embedder", "hashing")
    assert code == 0 and "## Entities" in text and "## Relationships" in text and "## Sources" in text


def test_local_mode_honours_filters_and_min_score(built, kgrag):
    code, out, _ = kgrag("docs", "list", "--json")
    docs = {d["title"]: d["id"] for d in json.loads(out)}
    levy = docs["Shawn Levy.txt"]
    code, out, err = kgrag(
        "search", "Shawn Levy films", "--mode", "local", "--embedder", "hashing", "--json", "--filter", f"document={levy}"
    )
    assert code == 0, err
    assert {u["document_id"] for u in json.loads(out)["text_units"]} == {levy}
    code, out, _ = kgrag(
        "search", "Shawn Levy films", "--mode", "local", "--embedder", "hashing", "--json", "--min-score", "0.999"
    )
    assert json.loads(out)["text_units"] == []


@pytest.mark.parametrize(
    "mode, flag",
    [
        ("ppr", "--blend"),
        ("local", "--rerank"),
        ("vector", "--damping"),
        ("entity", "--min-score"),
        ("graph", "--min-score"),
        ("ppr", "--hops"),
    ],
)
def test_flags_a_mode_cannot_honour_are_refused(kgrag, mode, flag):
    value = {"--blend": "seed", "--rerank": "score", "--damping": "0.5", "--min-score": "0.1", "--hops": "1"}[flag]
    code, _, err = kgrag("search", "anything", "--mode", mode, flag, value, "--embedder", "hashing")
    assert code == 2 and f"{flag} cannot be used with --mode {mode}" in err
