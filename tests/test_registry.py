"""The cypher/ registry: header rules, and every file against the real server."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from kgrag_neo4j.cypher_registry import load_registry, parse_text, used_parameters
from kgrag_neo4j.errors import CypherRegistryError, ServerError
from kgrag_neo4j.neo4j_release import release
from kgrag_neo4j.store import Neo4jStore

ROOT = Path(__file__).resolve().parent.parent
REGISTRY = load_registry()

GOOD = """// what it does
// mode: read
// params:
//   $namespace  STRING  tenant
// returns: n INTEGER
// browser: :params {namespace: 'default'}
MATCH (c:Chunk {namespace: $namespace}) RETURN count(c) AS n
"""


def test_parses_a_well_formed_file():
    q = parse_text(GOOD, name="x/y", path="x/y.cypher")
    assert q.mode == "read"
    assert q.param_names == {"namespace"}
    assert q.text.startswith("MATCH")
    assert q.doc == "what it does"


@pytest.mark.parametrize(
    "mutation, message",
    [
        (lambda s: s.replace("// mode: read\n", ""), "mode"),
        (lambda s: s.replace("mode: read", "mode: sometimes"), "mode"),
        (lambda s: s.replace("//   $namespace  STRING  tenant\n", ""), "used but not declared"),
        (lambda s: s.replace("{namespace: $namespace}", "{namespace: 'x'}"), "declared but not used"),
        (lambda s: s + "; MATCH (n) RETURN n", "one statement"),
        (lambda s: s.replace("// returns: n INTEGER\n", ""), "returns"),
        (lambda s: s.replace("// browser: :params {namespace: 'default'}\n", ""), "browser"),
        (lambda s: s.replace("//   $namespace  STRING  tenant", "//   $namespace"), "malformed parameter"),
    ],
)
def test_rejects_malformed_headers_with_file_and_line(mutation, message):
    with pytest.raises(CypherRegistryError) as err:
        parse_text(mutation(GOOD), name="x/y", path="x/y.cypher")
    assert str(err.value).startswith("x/y.cypher:")
    assert message in str(err.value)


LISTS = """// takes lists
// mode: write
// params:
//   $namespace  STRING        tenant
//   $ids        LIST<STRING>  chunks
//   $rows       LIST<MAP>     [{id, n}]
// returns: n INTEGER
// browser: :params {namespace: 'demo', ids: [], rows: []}
UNWIND $rows AS row
MATCH (c:Chunk {id: row.id}) WHERE c.namespace = $namespace AND (c.id IN $ids OR size($ids) = 0)
SET c.note = '$ids stays', c.n = row.n // $rows stays
RETURN count(c) AS n
"""


def test_list_parameters_are_sent_in_one_map_so_the_server_plans_once():
    q = parse_text(LISTS, name="x/lists", path="x/lists.cypher")
    assert q.packed == ("ids", "rows")
    text, params = q.send({"namespace": "n", "ids": ["a"], "rows": [{"id": "a", "n": 1}]})
    assert params == {"namespace": "n", "kgrag_lists": {"ids": ["a"], "rows": [{"id": "a", "n": 1}]}}
    assert "UNWIND $kgrag_lists.rows AS row" in text
    assert "c.id IN $kgrag_lists.ids OR size($kgrag_lists.ids) = 0" in text
    # strings and comments are the file's own; scalars stay top-level parameters
    assert "'$ids stays'" in text and "// $rows stays" in text
    assert "c.namespace = $namespace" in text
    # the text Browser runs is the file's
    assert q.text.startswith("UNWIND $rows AS row")
    plain = parse_text(GOOD, name="x/y", path="x/y.cypher")
    assert plain.send({"namespace": "n"}) == (plain.text, {"namespace": "n"})


def test_a_parameter_named_like_the_list_map_is_refused():
    clash = GOOD.replace("$namespace", "$kgrag_lists").replace("namespace: 'default'", "kgrag_lists: 'x'")
    with pytest.raises(CypherRegistryError, match="kgrag_lists"):
        parse_text(clash, name="x/y", path="x/y.cypher")


def test_dollar_in_strings_and_comments_is_not_a_parameter():
    assert used_parameters("RETURN '$a' AS x, \"$b\" AS y // $c\n, $d AS z /* $e */") == {"d"}


def test_registry_is_immutable_and_named_by_path():
    assert "chunks/search_vector" in REGISTRY
    with pytest.raises(TypeError):
        REGISTRY._queries["x"] = None  # type: ignore[index]


def test_unknown_query_name_is_a_clear_error():
    with pytest.raises(CypherRegistryError, match="no cypher query named"):
        REGISTRY["nope/nothing"]


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_statement_explains_on_the_real_server(name, store):
    store.runner.explain(name)


@pytest.fixture(scope="module")
def cypher_languages(driver, neo4j_settings) -> tuple[str, ...]:
    """The language prefixes to EXPLAIN in: none on 5.26; both Cypher 5 and Cypher 25 on a
    server that has both (2025.06 on), whatever its databases' default."""
    version = Neo4jStore(driver, database=neo4j_settings.database).verify()["version"]
    try:
        both = release(version).cypher_25
    except ServerError:  # a build kgrag does not start itself (Aura's, say): ask it
        both = not version.startswith("5.")
    return ("CYPHER 5 ", "CYPHER 25 ") if both else ("",)


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_statement_plans_without_a_notification_in_each_cypher_language(
    name, driver, neo4j_settings, schema_ready, cypher_languages
):
    """No deprecation (a removal to come), performance or shadowing warning on either line; the
    driver drops the UNRECOGNIZED ones (labels a fresh database lacks)."""
    q = REGISTRY[name]
    with driver.session(database=neo4j_settings.database) as session:
        for language in cypher_languages:
            for statement in q.statements:
                summary = session.run(language + "EXPLAIN " + statement, {p: None for p in q.param_names}).consume()
                notes = [f"{n.get('code')}: {n.get('description')}" for n in summary.notifications or []]
                assert notes == [], f"{name} ({language.strip() or 'default language'}): {notes}"


@pytest.mark.parametrize("name", sorted(n for n in REGISTRY if REGISTRY[n].packed))
def test_every_statement_as_sent_plans_without_a_notification(name, driver, neo4j_settings, schema_ready):
    """What the runner sends (list parameters read from one map) plans as cleanly as the file."""
    q = REGISTRY[name]
    text, params = q.send({p: ([] if p in q.packed else None) for p in q.param_names})
    with driver.session(database=neo4j_settings.database) as session:
        summary = session.run("EXPLAIN " + text, params).consume()
    notes = [f"{n.get('code')}: {n.get('description')}" for n in summary.notifications or []]
    assert notes == [], f"{name}: {notes}"


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_statement_returns_values_not_graph_entities(name):
    # the runner copies records shallowly (store/runner.py as_rows): a NODE, RELATIONSHIP or
    # PATH column would reach callers as a driver object instead of a dict. Only a statement
    # made for Browser's graph view returns them, and its one caller turns them into maps.
    from kgrag_neo4j.store.graph import GRAPH_VIEW_STATEMENTS

    returns = REGISTRY[name].returns
    graph_entities = bool(re.search(r"\b(NODE|RELATIONSHIP|PATH)\b", returns))
    assert graph_entities == (name in GRAPH_VIEW_STATEMENTS), f"{name} returns {returns}"


def _python_sources() -> str:
    return "\n".join(p.read_text() for p in (ROOT / "kgrag_neo4j").rglob("*.py")) + "\n".join(
        p.read_text() for p in (ROOT / "bench").rglob("*.py")
    )


def test_every_cypher_file_is_used_by_python_code():
    sources = _python_sources()
    unused = [name for name in REGISTRY if f'"{name}"' not in sources and f"'{name}'" not in sources]
    assert unused == [], f"cypher files no Python code uses: {unused}"


def test_no_python_module_builds_cypher_from_strings():
    pattern = re.compile(r"\b(MATCH|MERGE|CREATE|UNWIND|DETACH DELETE)\b\s*[\(\[]")
    offenders = []
    for path in (ROOT / "kgrag_neo4j").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.JoinedStr):
                text = "".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
                if pattern.search(text):
                    offenders.append(f"{path.name}:{node.lineno}")
    assert offenders == []


@pytest.mark.parametrize(
    "text, used",
    [
        ("RETURN $a", {"a"}),
        ("RETURN 'it''s $no' + $yes", {"yes"}),
        ("RETURN 'escaped \\' $no' + $yes", {"yes"}),
        ('RETURN "double \\" $no" + $yes', {"yes"}),
        ("RETURN `odd $name` AS $yes", {"yes"}),
        ("RETURN $yes // $no\n, $also", {"yes", "also"}),
        ("RETURN /* $no\n $no2 */ $yes", {"yes"}),
        ("RETURN $yes, 'unclosed $no", {"yes"}),
        ("RETURN $yes /* unclosed $no", {"yes"}),
        ("RETURN 'ends in a backslash \\", set()),
        ("RETURN 'a\\\\' + $yes", {"yes"}),
    ],
)
def test_parameters_inside_literals_and_comments_are_not_parameters(text, used):
    from kgrag_neo4j.cypher_registry import _strip_literals, used_parameters

    assert used_parameters(text) == used
    assert len(_strip_literals(text)) == len(text)  # statement splitting maps positions back
