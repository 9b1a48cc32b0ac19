"""``:params`` lines: read as Browser reads them, written so Browser and Cypher read them back,
and a statement's parameters chosen from its file, the namespace, the query and overrides."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kgrag_neo4j.cypher_params import (
    browser_defaults,
    format_params,
    fulltext_params,
    parse_params,
    statement_params,
    takes_embedding,
    to_literal,
)
from kgrag_neo4j.cypher_registry import load_registry
from kgrag_neo4j.errors import InputError

REGISTRY = load_registry()


@pytest.mark.parametrize(
    "line, expected",
    [
        (":params {namespace: 'demo', limit: 50}", {"namespace": "demo", "limit": 50}),
        (":params {}", {}),
        ("{a: null, b: true, c: false, d: -1.5e3, e: .5}", {"a": None, "b": True, "c": False, "d": -1500.0, "e": 0.5}),
        ("{'quoted key': 1, \"dq\": [1, [2, {x: 'y'}]]}", {"quoted key": 1, "dq": [1, [2, {"x": "y"}]]}),
        (
            "{s: 'it\\'s a \"test\"\\n', t: \"tab\\there\", u: 'caf\\u00e9 \\\\ end'}",
            {"s": 'it\'s a "test"\n', "t": "tab\there", "u": "café \\ end"},
        ),
        ("{meta_pairs: ['lang\u241fen']}", {"meta_pairs": ["lang\u241fen"]}),
        ("  :params   {  a :1 ,b: [ ] }  ", {"a": 1, "b": []}),
    ],
)
def test_reads_params_lines(line, expected):
    assert parse_params(line) == expected


def test_browser_reads_every_number_as_a_float():
    values = parse_params(":params {limit: 50, xs: [1, 2.5], m: {k: 3}}", browser_numbers=True)
    assert values == {"limit": 50.0, "xs": [1.0, 2.5], "m": {"k": 3.0}}
    assert all(isinstance(v, float) for v in (values["limit"], *values["xs"], values["m"]["k"]))


@pytest.mark.parametrize(
    "line, message",
    [
        ("{a: 1", "expected '}'"),
        ("{a 1}", "expected ':'"),
        ("{a: 'x}", "unterminated string"),
        ("{a: undefined}", "expected a value"),
        ("{a: 1, a: 2}", "given twice"),
        ("[1, 2]", "one map"),
        ("{a: 1} extra", "unexpected text"),
        (r"{a: '\q'}", "unknown escape"),
    ],
)
def test_bad_lines_are_one_clear_error(line, message):
    with pytest.raises(InputError, match=message) as err:
        parse_params(line)
    assert "\n" not in str(err.value)


def test_writes_values_back():
    line = format_params(
        {"namespace": "it's", "k": 3, "w": 0.5, "one": 1.0, "on": True, "none": None, "xs": [1, "a\nb"], "m": {"weird key": "\\"}}
    )
    assert line == (
        ":params {namespace: 'it\\'s', k: 3, w: 0.5, one: 1.0, on: true, none: null, xs: [1, 'a\\nb'], m: {'weird key': '\\\\'}}"
    )
    assert parse_params(line)["m"] == {"weird key": "\\"}


@pytest.mark.parametrize("value", [math.nan, math.inf, object()])
def test_values_without_a_literal_are_refused(value):
    with pytest.raises(InputError):
        to_literal(value)


_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53), max_value=2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(min_size=1), inner, max_size=4)),
    max_leaves=12,
)


@given(st.dictionaries(st.text(min_size=1), _values, max_size=5))
def test_round_trip(values):
    line = format_params(values)
    assert parse_params(line) == values
    assert "\n" not in line


def test_every_file_has_a_browser_line_for_every_parameter():
    for name, query in REGISTRY.items():
        assert set(browser_defaults(query)) == set(query.param_names), name


def test_every_vector_file_gives_the_recipe_and_every_filter_file_the_encoding():
    for name, query in REGISTRY.items():
        header = open(query.path, encoding="utf-8").read().split("\n" + query.text.splitlines()[0])[0]
        if takes_embedding(query):
            assert f"kgrag cypher params {name}" in header, name
            assert browser_defaults(query)["embedding"] == [], f"{name}: leave the vector empty for cypher params to fill"
        if "filter" in query.param_names:
            assert "U+241F" in header and "meta_pairs" in header, name


def test_full_text_parameters_are_found_by_their_declared_meaning():
    assert fulltext_params(REGISTRY["chunks/search_keyword"]) == ["query"]
    assert fulltext_params(REGISTRY["graph/retrieve"]) == ["keyword_query"]
    assert fulltext_params(REGISTRY["chunks/search_vector"]) == []


def test_statement_params_layers_file_namespace_query_and_overrides():
    query = REGISTRY["graph/retrieve"]
    chosen = statement_params(
        query,
        namespace="mine",
        query_text='expansion AND "hops"*',
        params={"top_k": 3},
        filter_param={
            "document_ids": ["doc_1"],
            "source_prefix": None,
            "meta_pairs": [],
            "created_after": None,
            "created_before": None,
        },
        embed=lambda text: [0.25, 0.5],
    )
    values = chosen.values
    assert list(values) == [p.name for p in query.params]
    assert values["namespace"] == "mine" and values["top_k"] == 3 and values["embedding"] == [0.25, 0.5]
    # the full-text query names its namespace, as the library sends it (finding 4 of issue 15)
    assert values["keyword_query"] == '+namespace:"mine"^0 +content:(expansion and hops)'
    assert values["filter"]["document_ids"] == ["doc_1"]
    assert values["max_hops"] == browser_defaults(query)["max_hops"]
    assert "max_hops" in chosen.from_file and "top_k" not in chosen.from_file and "embedding" not in chosen.from_file
    assert chosen.line.startswith(
        """:params {namespace: 'mine', embedding: [0.25, 0.5], keyword_query: '+namespace:"mine"^0 +content:(expansion and hops)'"""
    )


@pytest.mark.parametrize(
    "name, kwargs, message",
    [
        ("documents/list_documents", {"params": {"nope": 1}}, "has no parameter nope"),
        ("schema/index_status", {"namespace": "x"}, "takes no namespace"),
        ("documents/list_documents", {"query_text": "x"}, "takes no query"),
        ("documents/list_documents", {"filter_param": {}}, "takes no filters"),
    ],
)
def test_statement_params_refuses_what_the_statement_cannot_take(name, kwargs, message):
    with pytest.raises(InputError, match=message):
        statement_params(REGISTRY[name], **kwargs)


def test_a_query_vector_needs_an_embedder():
    from kgrag_neo4j.cypher_params import resolve_params
    from kgrag_neo4j.errors import ConfigurationError

    with pytest.raises(ConfigurationError):
        statement_params(REGISTRY["chunks/search_vector"], query_text="x")
    with pytest.raises(ConfigurationError, match="needs the database"):
        resolve_params(REGISTRY["chunks/search_vector"], query_text="x")
    keyword_only = statement_params(REGISTRY["chunks/search_keyword"], query_text="Graph-RAG: hops?")
    assert keyword_only.values["query"] == '+namespace:"demo"^0 +content:(graph rag hops)'
