"""``kgrag triples`` against the real server: status, query, stats, clear, prune; text and JSON;
``kgrag graph``, its old name, still works and says so on stderr."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from kgrag_neo4j.cli import cli
from kgrag_neo4j.types import Chunk, ChunkEdge, Document, RelationType
from kgrag_neo4j.types.triples import Triple

TRIPLES = [
    Triple("error:timeout", "caused_by", "tool:http_client"),
    Triple("error:timeout", "resolved_by", "fix:retry_logic"),
    Triple("error:timeout", "in_session", "session:abc"),
    Triple("error:deadline", "caused_by", "tool:http_client"),
    Triple("go_concurrency", "related_to", "goroutines"),
    Triple("nil_pointer", "related_to", "null_reference"),
    Triple("nil_pointer", "similar_to", "null_reference"),
]


@pytest.fixture
def kgrag(neo4j_settings):
    runner = CliRunner()
    s = neo4j_settings
    base = ["--uri", s.uri, "--user", s.user, "--password", s.password]
    if s.database:
        base += ["--database", s.database]

    def run(*args, input=None, group="triples"):
        return runner.invoke(cli, [*base, group, *args], input=input, catch_exceptions=False)

    return run


@pytest.fixture
def graph(store):
    doc = Document(id=f"doc-{store.namespace}", source="a.md", title="A", content="a", content_hash="h")
    chunks = [Chunk(id=f"{store.namespace}-{i}", document_id=doc.id, content=f"chunk {i}", chunk_index=i) for i in range(3)]
    store.store_document(doc, chunks)
    store.store_edges([ChunkEdge(chunks[0].id, chunks[1].id, RelationType.SEQUENCE, 1.0)])
    store.add_triples(TRIPLES[:-1] + [Triple("nil_pointer", "similar_to", "null_reference", {"chunk_id": chunks[2].id})])
    return store


def test_status_text_and_json(kgrag, graph, neo4j_settings):
    ns = graph.namespace
    result = kgrag("status", "--namespace", ns)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "Knowledge Graph Status",
        "  Enabled:       true",
        "  Backend:       neo4j",
        f"  URI:           {neo4j_settings.redacted_uri}",
        f"  Database:      {neo4j_settings.database or '(server default)'}",
        f"  Namespace:     {ns}",
        f"  Triples:       {len(TRIPLES)}",
    ]
    assert neo4j_settings.password not in result.output
    data = json.loads(kgrag("status", "--namespace", ns, "--json").stdout)
    assert data == {
        "enabled": True,
        "backend": "neo4j",
        "uri": neo4j_settings.redacted_uri,
        "database": neo4j_settings.database,
        "namespace": ns,
        "triples": len(TRIPLES),
    }


@pytest.mark.parametrize(
    "options, subject, predicate, obj",
    [
        (["--subject", "error:timeout"], "error:timeout", None, None),
        (["--subject", "error:timeout", "--predicate", "resolved_by"], "error:timeout", "resolved_by", None),
        (["--object", "tool:http_client"], None, None, "tool:http_client"),
        (["--predicate", "related_to", "--object", "goroutines"], None, "related_to", "goroutines"),
        (["--predicate", "similar_to"], None, "similar_to", None),
        ([], None, None, None),
    ],
)
def test_query_text_and_json(kgrag, graph, options, subject, predicate, obj):
    ns = graph.namespace
    want = graph.query_triples(subject=subject, predicate=predicate, object=obj)
    assert want  # every case finds something
    data = json.loads(kgrag("query", *options, "--namespace", ns, "--json").stdout)
    assert [(d["subject"], d["predicate"], d["object"]) for d in data] == [t.key() for t in want]
    text = kgrag("query", *options, "--namespace", ns).stdout.splitlines()
    assert text[0].split() == ["SUBJECT", "PREDICATE", "OBJECT"]
    assert [line.split() for line in text[1:-1]] == [list(t.key()) for t in want]
    assert text[-1] == f"({len(want)} triple{'s' if len(want) != 1 else ''})"


def test_query_limit_metadata_and_bad_predicate(kgrag, graph):
    ns = graph.namespace
    data = json.loads(kgrag("query", "--limit", "2", "--namespace", ns, "--json").stdout)
    assert len(data) == 2
    (similar,) = json.loads(kgrag("query", "--predicate", "similar_to", "--namespace", ns, "--json").stdout)
    assert similar["metadata"]["chunk_id"] == f"{ns}-2"
    bad = kgrag("query", "--predicate", "caused_by') DETACH DELETE n", "--namespace", ns)
    assert bad.exit_code == 1 and "InputError" in bad.output and "not a valid name" in bad.output
    assert kgrag("query", "--subject", "nobody", "--namespace", ns).stdout == "no triples found\n"


def test_stats_text_and_json(kgrag, graph):
    ns = graph.namespace
    predicates = graph.predicate_stats()
    counts = graph.graph_stats()
    data = json.loads(kgrag("stats", "--namespace", ns, "--json").stdout)
    assert data == {
        "namespace": ns,
        "total_triples": len(TRIPLES),
        "predicates": predicates,
        "nodes": counts["nodes"],
        "edges": counts["edges"],
    }
    lines = kgrag("stats", "--namespace", ns).stdout.splitlines()
    assert lines[:4] == ["Knowledge Graph Statistics", f"  Total Triples: {len(TRIPLES)}", "", "PREDICATE        COUNT"]
    assert lines[4 : 4 + len(predicates)] == [f"{p:<17}{n}" for p, n in predicates.items()]
    assert predicates["caused_by"] == 2 and lines[4] == "caused_by        2"
    nodes_at = lines.index("NODES            COUNT")
    assert lines[nodes_at + 1 : nodes_at + 5] == [f"{k:<17}{v}" for k, v in counts["nodes"].items()]
    edges_at = lines.index("EDGES            COUNT")
    assert f"{'MENTIONS':<17}2" in lines[edges_at:] and f"{'RELATES_TO':<17}1" in lines[edges_at:]


def test_clear_asks_first_and_keeps_documents(kgrag, graph):
    ns = graph.namespace
    before = graph.graph_stats()
    refused = kgrag("clear", "--namespace", ns, input="n\n")
    assert refused.exit_code == 1 and "Aborted" in refused.output
    assert f"Delete all {len(TRIPLES)} triples of namespace '{ns}'?" in refused.output
    assert graph.count_triples() == len(TRIPLES)
    done = kgrag("clear", "--namespace", ns, input="y\n")
    assert done.exit_code == 0, done.output
    assert f"cleared namespace '{ns}': {len(TRIPLES)} triples, 2 chunk mentions" in done.stdout
    after = graph.graph_stats()
    assert graph.count_triples() == 0 and after["nodes"]["Entity"] == 0
    assert after["nodes"]["Document"] == before["nodes"]["Document"] == 1
    assert after["nodes"]["Chunk"] == before["nodes"]["Chunk"] == 3
    assert after["edges"]["RELATES_TO"] == before["edges"]["RELATES_TO"] == 1


def test_clear_force_json_touches_one_namespace(kgrag, graph, make_namespace):
    ns = graph.namespace
    other = graph.with_namespace(make_namespace())
    other.add_triples(TRIPLES[:2])
    try:
        result = kgrag("clear", "--force", "--namespace", ns, "--json")
        assert result.exit_code == 0 and result.stderr == ""  # no prompt with --force
        entities = len({n for t in TRIPLES for n in (t.subject, t.object)})
        assert json.loads(result.stdout) == {
            "namespace": ns,
            "edges": len(TRIPLES),
            "mentions": 2,
            "kept_mentions": 0,
            "entities": entities,
        }
        assert graph.count_triples() == 0 and other.count_triples() == 2
        assert json.loads(kgrag("stats", "--namespace", other.namespace, "--json").stdout)["total_triples"] == 2
    finally:
        other.clear_triples()


def test_prune_dry_run_then_real(kgrag, graph, driver, neo4j_settings):
    ns = graph.namespace
    # an interrupted foreign writer: chunk 1 loses its document link (test setup only)
    driver.execute_query(
        "MATCH (:Document)-[r:HAS_CHUNK]->(c:Chunk {id: $id}) DELETE r", id=f"{ns}-1", database_=neo4j_settings.database
    )
    dry = kgrag("prune", "--dry-run", "--namespace", ns)
    assert dry.stdout == "would remove 1 orphan chunks and 1 chunk edges\n"
    assert json.loads(kgrag("prune", "--dry-run", "--namespace", ns, "--json").stdout) == {
        "namespace": ns,
        "dry_run": True,
        "chunks": 1,
        "edges": 1,
    }
    assert json.loads(kgrag("prune", "--namespace", ns, "--json").stdout) == {
        "namespace": ns,
        "dry_run": False,
        "chunks": 1,
        "edges": 1,
    }
    assert kgrag("prune", "--namespace", ns).stdout == "removed 0 orphan chunks and 0 chunk edges\n"
    assert graph.count_triples() == len(TRIPLES)  # pruning chunks never touches triples


def test_every_triples_command_has_help(kgrag):
    for command in ("status", "query", "stats", "clear", "prune"):
        result = kgrag(command, "--help")
        assert result.exit_code == 0 and "--namespace" in result.stdout and "--json" in result.stdout
        assert "Example:" in result.stdout


def test_query_refuses_an_unknown_predicate_and_names_the_allowed_ones(kgrag, graph):
    ns = graph.namespace
    graph.add_triples(
        [Triple("svc", "deployed_on", "host")],
        registry=__import__("kgrag_neo4j.types.triples", fromlist=["PredicateRegistry"]).PredicateRegistry(["deployed_on"]),
    )
    typo = kgrag("query", "--predicate", "casued_by", "--namespace", ns)
    assert typo.exit_code == 1
    assert "unknown predicate 'casued_by'" in typo.stderr and "caused_by" in typo.stderr
    assert len(typo.stderr.strip().splitlines()) == 1
    # a predicate the namespace uses is accepted, and a known one in another spelling too
    used = kgrag("query", "--predicate", "deployed_on", "--namespace", ns, "--json")
    assert used.exit_code == 0 and [t["subject"] for t in json.loads(used.stdout)] == ["svc"]
    spelled = kgrag("query", "--predicate", "Caused By", "--namespace", ns, "--json")
    assert spelled.exit_code == 0 and len(json.loads(spelled.stdout)) == 2


OLD_NAME = "kgrag graph is the old name of kgrag triples; use kgrag triples"


def test_the_old_name_works_and_says_so_on_stderr(kgrag, graph):
    ns = graph.namespace
    new = kgrag("query", "--subject", "error:timeout", "--namespace", ns, "--json")
    old = kgrag("query", "--subject", "error:timeout", "--namespace", ns, "--json", group="graph")
    assert new.exit_code == old.exit_code == 0, old.output
    assert old.stdout == new.stdout and len(json.loads(old.stdout)) == 3
    assert new.stderr == "" and old.stderr.splitlines() == [OLD_NAME]
    stats = kgrag("stats", "--namespace", ns, group="graph")
    assert stats.exit_code == 0 and stats.stdout.startswith("Knowledge Graph Statistics")
    assert stats.stderr.splitlines() == [OLD_NAME]


def test_the_old_name_is_hidden_from_help(kgrag):
    top = CliRunner().invoke(cli, ["--help"]).stdout
    assert "  triples " in top and "  graph " not in top
    old = CliRunner().invoke(cli, ["graph", "--help"])
    assert old.exit_code == 0 and "old name of kgrag triples" in old.stdout
    assert sorted(cli.commands["graph"].commands) == sorted(cli.commands["triples"].commands)
