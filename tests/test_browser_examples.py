"""Every cypher/ file's ``browser:`` line runs as pasted into Neo4j Browser on a database where
the demo was ingested (namespace ``demo``), and the line ``kgrag cypher params NAME --query``
prints returns rows. "As pasted" means as Browser sends it: the line is read the way Browser
reads a ``:params`` map (every number a FLOAT), then the statement runs on the demo server.

Writes run in a transaction that is rolled back, so the demo stays as ingested for the next
example. The files are taken from the registry, so files added later are checked too."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner
from neo4j import GraphDatabase

from kgrag_neo4j.browser import EXPLORE
from kgrag_neo4j.cli import cli
from kgrag_neo4j.cypher_params import browser_defaults, fulltext_params, parse_params, takes_embedding
from kgrag_neo4j.cypher_registry import load_registry

REGISTRY = load_registry()
QUERY = "how does expansion work?"
#: files whose example cannot run on the demo database as pasted, and why
NOT_ON_THE_DEMO = {
    "server/set_initial_password": "runs once, as neo4j on a fresh server's system database (every LocalServer start runs it)",
}
#: files that take a query vector and ids another statement lists: they run as pasted, but on
#: the example's placeholder ids they find nothing
NEEDS_IDS = {
    "chunks/score_chunks": "scores the chunks it is given; chunks/list_document_chunks lists a document's",
}
#: the CLI talks to the demo server whatever the environment names
LOCAL_ONLY = {"NEO4J_URI": None, "NEO4J_PASSWORD": None, "NEO4J_USERNAME": None, "KGRAG_NAMESPACE": None}
QUERY_TAKING = sorted(n for n, q in REGISTRY.items() if (takes_embedding(q) or fulltext_params(q)) and n not in NEEDS_IDS)


def kgrag(server, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--data-dir", str(server.data_dir), *args], catch_exceptions=False, env=LOCAL_ONLY)
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.fixture(scope="module")
def demo_driver(demo_server):
    info = demo_server.status()
    with GraphDatabase.driver(info.uri, auth=(info.user, info.password)) as driver:
        yield driver


def run_as_browser(driver, name: str, line: str) -> list[dict]:
    """Run statement ``name`` after the ``:params`` line, with Browser's number types, in a
    transaction that is rolled back."""
    query = REGISTRY[name]
    params = {} if line.strip() == "(no parameters)" else parse_params(line, browser_numbers=True)
    rows: list[dict] = []
    with driver.session() as session:
        tx = session.begin_transaction()
        try:
            for statement in query.statements:
                rows = [dict(r) for r in tx.run(statement, params)]
        finally:
            tx.rollback()
    return rows


def has_data(rows: list[dict]) -> bool:
    return any(v not in (None, [], {}, 0, "") for row in rows for v in row.values())


@pytest.mark.parametrize("name", sorted(set(REGISTRY) - set(NOT_ON_THE_DEMO)))
def test_every_browser_line_runs_as_pasted_on_the_demo(name, demo_driver, demo_server):
    query = REGISTRY[name]
    line = query.browser
    if takes_embedding(query):
        # the one value a line cannot carry: the header says to take the line from cypher params
        assert f"kgrag cypher params {name}" in open(query.path, encoding="utf-8").read(), (
            f"{name}: the header must give the recipe for the query vector"
        )
        line = kgrag(demo_server, "cypher", "params", name, "--namespace", "demo", "--query", QUERY).strip()
    rows = run_as_browser(demo_driver, name, line)
    if name in QUERY_TAKING:
        assert has_data(rows), f"{name} found nothing for {QUERY!r} on the demo"


def test_only_the_listed_files_are_left_out():
    assert set(NOT_ON_THE_DEMO) <= set(REGISTRY) and set(NEEDS_IDS) <= set(REGISTRY)


@pytest.mark.parametrize("name", QUERY_TAKING)
def test_cypher_params_line_with_a_query_returns_rows(name, demo_driver, demo_server):
    line = kgrag(demo_server, "cypher", "params", name, "--namespace", "demo", "--query", QUERY).strip()
    assert line.startswith(":params {namespace: 'demo'")
    values = parse_params(line)
    assert list(values) == [p.name for p in REGISTRY[name].params]
    if takes_embedding(REGISTRY[name]):
        assert len(values["embedding"]) == 256 and all(isinstance(x, float) for x in values["embedding"])
    for keyword in fulltext_params(REGISTRY[name]):
        # the full-text query names its namespace, as the library sends it (issue 15, finding 4)
        assert values[keyword] == '+namespace:"demo"^0 +content:(how does expansion work)'
    assert has_data(run_as_browser(demo_driver, name, line))


def test_cypher_run_with_a_query_returns_rows(demo_server):
    result = CliRunner().invoke(
        cli,
        ["--data-dir", str(demo_server.data_dir), "cypher", "run", "graph/retrieve", "--namespace", "demo", "--query", QUERY],
        catch_exceptions=False,
        env=LOCAL_ONLY,
    )
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert rows and all(r["chunk"]["id"].startswith("chk_") for r in rows)
    assert "from the file's example:" in result.stderr and "top_k" in result.stderr


def test_cypher_params_takes_filters_that_match(demo_server, demo_driver):
    line = kgrag(
        demo_server,
        "cypher",
        "params",
        "chunks/search_vector",
        "--namespace",
        "demo",
        "--query",
        QUERY,
        "--filter",
        "source=docs/retrieval",
        "--param",
        "top_k=3",
    ).strip()
    values = parse_params(line)
    assert values["filter"]["source_prefix"] == "docs/retrieval" and values["top_k"] == 3
    rows = run_as_browser(demo_driver, "chunks/search_vector", line)
    assert rows and {r["chunk"]["source"] for r in rows} == {"docs/retrieval.md"}


def test_example_document_ids_are_the_demos(demo_driver):
    # document ids are a function of namespace and source, so the examples can name real ones
    wanted = set()
    for query in REGISTRY.values():
        wanted |= set(re.findall(r"'(doc_[0-9a-f]{32})'", query.browser))
    assert wanted, "no example names a demo document"
    with demo_driver.session() as session:
        found = {
            r["id"]
            for r in session.run(
                "MATCH (d:Document {namespace: 'demo'}) WHERE d.id IN $ids RETURN d.id AS id", ids=sorted(wanted)
            )
        }
    assert found == wanted


@pytest.mark.parametrize("explore", EXPLORE, ids=[e.title.split(":")[0] for e in EXPLORE])
def test_explore_statements_draw_a_graph_of_the_demo(explore, demo_driver):
    params = parse_params(explore.params, browser_numbers=True)
    with demo_driver.session() as session:
        result = session.run(explore.statement, params)
        graph = result.graph()
    assert len(graph.nodes) >= 3 and len(graph.relationships) >= 2
    labels = {label for node in graph.nodes for label in node.labels}
    # Browser captions each of these with a name or title (kgrag_neo4j/browser.py)
    for node in graph.nodes:
        assert node.get("name") or node.get("title"), f"{set(node.labels)} node without a caption property"
    assert labels


def test_query_taking_statements_are_found():
    # the generic detection covers the statements of today; files added later join by their header
    assert {
        "chunks/search_vector",
        "chunks/search_keyword",
        "graph/retrieve",
        "entities/search_entities",
        "entities/local_context",
        "entities/boost_retrieve",
    } <= set(QUERY_TAKING)


def test_browser_defaults_name_every_declared_parameter():
    for name, query in REGISTRY.items():
        assert set(browser_defaults(query)) == set(query.param_names), name
