"""Hostile input: property-based tests (hypothesis) that nothing crashes with an unhandled
exception, a spy on the driver proving that user strings reach Neo4j only as parameters, and
explicit Cypher-injection and Lucene-syntax attempts through every user-facing string."""

from __future__ import annotations

import dataclasses
import json
import math
import re
import unicodedata

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgrag_neo4j.cli import cli
from kgrag_neo4j.cli.cypher_cmd import parse_param
from kgrag_neo4j.cli.search_cmd import parse_filter
from kgrag_neo4j.cypher_registry import load_registry
from kgrag_neo4j.errors import ConfigurationError, InputError, KgragError, NotFoundError, ProviderResponseError
from kgrag_neo4j.ids import content_hash
from kgrag_neo4j.ingestion.chunkers import MarkdownChunker, RecursiveChunker
from kgrag_neo4j.ingestion.edges import parse_edges
from kgrag_neo4j.ingestion.extractors import ExtractorRegistry
from kgrag_neo4j.options import GraphOptions
from kgrag_neo4j.settings import validate_namespace
from kgrag_neo4j.store import Neo4jStore
from kgrag_neo4j.store.chunks import escape_lucene_query
from kgrag_neo4j.triples.parsing import parse_triples
from kgrag_neo4j.types import (
    Chunk,
    ChunkEdge,
    Document,
    RelationType,
    by_document,
    by_meta,
    by_source,
    filters_to_param,
)
from kgrag_neo4j.types.triples import PredicateRegistry, Triple

from .reliability_helpers import counts, no_leaked_threads  # noqa: F401

INJECTIONS = [
    "x'}) MATCH (n) DETACH DELETE n //",
    'x"}) MATCH (n) DETACH DELETE n //',
    "x` }) MATCH (n) DETACH DELETE n //",
    "') CALL db.clearQueryCaches() //",
    "$namespace} RETURN 1 UNION MATCH (n) RETURN n //",
    "x\\'}) WITH 1 AS a MATCH (n) SET n.pwned = true //",
    "MATCH (n) DETACH DELETE n; MATCH (m) RETURN m",
    "/* */ RETURN 1 //",
]
DB_SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)


# -- a spy on what is sent: Cypher text must be registry text, user strings only parameters ------


class _SpyTx:
    def __init__(self, tx, sent):
        self._tx, self._sent = tx, sent

    def run(self, query, parameters=None, **kwargs):
        self._sent.append(query)
        return self._tx.run(query, parameters, **kwargs)


class _SpySession:
    def __init__(self, session, sent):
        self._s, self._sent = session, sent

    def __enter__(self):
        self._s.__enter__()
        return self

    def __exit__(self, *exc):
        return self._s.__exit__(*exc)

    def execute_read(self, work, *args, **kwargs):
        return self._s.execute_read(lambda tx: work(_SpyTx(tx, self._sent)), *args, **kwargs)

    def execute_write(self, work, *args, **kwargs):
        return self._s.execute_write(lambda tx: work(_SpyTx(tx, self._sent)), *args, **kwargs)

    def run(self, query, parameters=None, **kwargs):
        self._sent.append(query)
        return self._s.run(query, parameters, **kwargs)


class SpyDriver:
    """The real driver, recording every query text it is given."""

    def __init__(self, driver):
        self._driver, self.sent = driver, []

    def session(self, **kwargs):
        return _SpySession(self._driver.session(**kwargs), self.sent)

    def __getattr__(self, name):
        return getattr(self._driver, name)


def _registry_texts() -> set[str]:
    out = set()
    for q in load_registry().values():
        out.add(q.text)
        out.add(q.sent)  # what the runner sends: the same statement, its lists read from one map
        out.update(q.statements)
    return out


def _doc(store, source, *, text="alpha beta gamma", metadata=None, chunk_meta=None, embedder=None):
    doc_id = "doc_" + content_hash(store.namespace + "\x1f" + source)[:32]
    vector = embedder.embed([text])[0] if embedder else None
    doc = Document(id=doc_id, source=source, title=source, content=text, content_hash=content_hash(text), metadata=metadata or {})
    chunks = [
        Chunk(id=doc_id + "-0", document_id=doc_id, content=text, embedding=vector, metadata=chunk_meta or {}),
        Chunk(id=doc_id + "-1", document_id=doc_id, content=text + " delta", embedding=vector),
    ]
    return doc, chunks


@pytest.fixture
def victim(driver, neo4j_settings, schema_ready, hashing_embedder, make_namespace):
    """A namespace with ordinary data that every attack must leave untouched."""
    store = Neo4jStore(driver, namespace=make_namespace("victim"), database=neo4j_settings.database)
    doc, chunks = _doc(store, "victim/a.txt", embedder=hashing_embedder)
    store.store_document(doc, chunks)
    store.store_edges([ChunkEdge(chunks[0].id, chunks[1].id, RelationType.SEQUENCE, 1.0)])
    return store, counts(driver, store.namespace)


def test_user_strings_reach_cypher_only_as_parameters(
    driver, neo4j_settings, schema_ready, hashing_embedder, victim, make_namespace
):
    spy = SpyDriver(driver)
    hostile_ns = make_namespace(INJECTIONS[0])
    store = Neo4jStore(spy, namespace=hostile_ns, database=neo4j_settings.database)
    vector = hashing_embedder.embed(["alpha"])[0]
    for i, evil in enumerate(INJECTIONS[:4]):  # every attack gets its own explicit tests below
        doc, chunks = _doc(
            store, evil, text=f"alpha {evil}", metadata={evil: evil, "k": evil}, chunk_meta={evil: i}, embedder=hashing_embedder
        )
        doc = dataclasses.replace(doc, title=evil)
        assert store.store_document(doc, chunks) == "new"
        store.store_edges([ChunkEdge(chunks[0].id, chunks[1].id, RelationType.REFERENCES, 0.5, description=evil)])
        store.search_chunks(vector, 5, [by_meta(evil, evil), by_source(evil), by_document(doc.id, evil)])
        store.search_chunks_keyword(evil, 5, [by_meta("k", evil)])
        store.graph_retrieve(
            vector,
            evil,
            5,
            GraphOptions(blend="seed", seed_keyword_weight=0.5, relation_filter=["references"]),
            [by_meta(evil, evil)],
        )
        store.get_chunks_by_ids([evil, chunks[0].id])
        store.get_edges([evil])
        assert store.document_state(evil) is None
        with pytest.raises(NotFoundError):
            store.get_document(evil)
        assert store.delete_document(evil) is False
        if hasattr(store, "add_triples"):
            store.add_triples([Triple(evil, "caused_by", evil + " object", {"note": evil})])
            assert store.query_triples(subject=evil)
        if hasattr(store, "upsert_entities"):
            from kgrag_neo4j.types.entities import Entity

            store.upsert_entities([Entity.create(evil, "CONCEPT", namespace=hostile_ns, description=evil)])
            assert store.get_entity_by_name(evil)
    allowed = _registry_texts()
    assert spy.sent and set(spy.sent) <= allowed, [t[:80] for t in set(spy.sent) - allowed]
    for text in spy.sent:
        for evil in INJECTIONS:
            assert evil not in text
    victim_store, victim_counts = victim
    assert counts(driver, victim_store.namespace) == victim_counts


# -- explicit injection attempts through every user-facing string --------------------------------


@pytest.mark.parametrize("evil", INJECTIONS)
def test_injection_through_document_strings_is_stored_verbatim(store, driver, hashing_embedder, victim, evil):
    doc, chunks = _doc(store, evil, text=f"alpha {evil}", metadata={evil: evil, "source": evil}, embedder=hashing_embedder)
    doc = dataclasses.replace(doc, title=evil)
    store.store_document(doc, chunks)
    got = store.get_document(doc.id)
    assert (got.source, got.title, got.metadata) == (evil, evil, {evil: evil, "source": evil})
    assert [d.source for d in store.list_documents()] == [evil]
    hits = store.search_chunks(hashing_embedder.embed(["alpha"])[0], 5, [by_meta(evil, evil), by_source(evil)])
    assert {h.document_id for h in hits} == {doc.id} and hits[0].source == evil
    victim_store, victim_counts = victim
    assert counts(driver, victim_store.namespace) == victim_counts
    assert victim_store.list_documents()[0].source == "victim/a.txt"


@pytest.mark.parametrize("evil", INJECTIONS)
def test_injection_through_the_namespace(driver, neo4j_settings, schema_ready, hashing_embedder, victim, evil, make_namespace):
    namespace = make_namespace(evil)
    store = Neo4jStore(driver, namespace=namespace, database=neo4j_settings.database)
    doc, chunks = _doc(store, "inside.txt", embedder=hashing_embedder)
    store.store_document(doc, chunks)
    assert [d.namespace for d in store.list_documents()] == [namespace]
    assert store.get_document(doc.id).namespace == namespace
    victim_store, victim_counts = victim
    assert counts(driver, victim_store.namespace) == victim_counts
    assert store.delete_document(doc.id) is True
    assert counts(driver, victim_store.namespace) == victim_counts


@pytest.mark.parametrize("evil", INJECTIONS + ["similar_to]->() DETACH DELETE n //", "RELATES_TO"])
def test_relation_names_come_only_from_the_allow_list(store, hashing_embedder, evil, neo4j_settings):
    doc, chunks = _doc(store, "rel.txt", embedder=hashing_embedder)
    store.store_document(doc, chunks)
    with pytest.raises(InputError):
        RelationType.parse(evil)
    with pytest.raises(InputError):
        store.store_edges([ChunkEdge(chunks[0].id, chunks[1].id, evil, 0.5)])
    with pytest.raises(ConfigurationError, match="relation_filter"):  # refused before any statement
        store.graph_retrieve(hashing_embedder.embed(["x"])[0], "", 3, GraphOptions(relation_filter=[evil]))
    assert store.get_edges([chunks[0].id]) == []
    result = CliRunner().invoke(
        cli,
        [
            "--uri",
            neo4j_settings.uri,
            "--password",
            neo4j_settings.password,
            "search",
            "alpha",
            "--mode",
            "graph",
            "--relations",
            evil,
            "--embedder",
            "hashing",
            "--namespace",
            store.namespace,
        ],
    )
    assert result.exit_code == 1 and "Traceback" not in result.output
    errors = [line for line in result.stderr.splitlines() if not line.startswith("embedder:")]
    assert len(errors) == 1 and errors[0].startswith("Error: ")


@pytest.mark.parametrize("evil", INJECTIONS + ["caused_by]->() DETACH DELETE n", "CAUSED BY; DROP"])
def test_predicates_come_only_from_the_allow_list(store, evil):
    if not hasattr(store, "add_triples"):
        pytest.fail("Neo4jStore has no add_triples: the triple capability is missing")
    with pytest.raises(InputError):
        Triple("a", evil, "b")
    with pytest.raises(InputError):
        PredicateRegistry([evil])
    with pytest.raises(InputError):
        PredicateRegistry().validate(evil)
    with pytest.raises(InputError):
        store.query_triples(predicate=evil)
    parsed = parse_triples(f"a|{evil}|b", PredicateRegistry())
    assert not parsed.triples and parsed.dropped == 1


@pytest.mark.parametrize("evil", INJECTIONS)
def test_entity_names_are_stored_verbatim(store, driver, victim, evil):
    if not hasattr(store, "add_triples"):
        pytest.fail("Neo4jStore has no add_triples: the triple capability is missing")
    store.add_triples([Triple(evil, "caused_by", "plain object", {"source": evil})])
    [t] = store.query_triples(subject=evil)
    assert (t.subject, t.object, t.metadata.get("source")) == (evil, "plain object", evil)
    assert [n.name for n in store.expand_triples([evil])] == ["plain object"]
    victim_store, victim_counts = victim
    assert counts(driver, victim_store.namespace) == victim_counts


def test_cypher_run_parameters_are_parameters(neo4j_settings, victim, driver):
    victim_store, victim_counts = victim
    for evil in INJECTIONS:
        result = CliRunner().invoke(
            cli,
            [
                "--uri",
                neo4j_settings.uri,
                "--password",
                neo4j_settings.password,
                "cypher",
                "run",
                "documents/delete_document",
                "--param",
                f"namespace={evil}",
                "--param",
                f"document_id={evil}",
            ],
        )
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout) == []
    bad = CliRunner().invoke(
        cli,
        [
            "--uri",
            neo4j_settings.uri,
            "--password",
            neo4j_settings.password,
            "cypher",
            "run",
            "documents/list_documents",
            "--param",
            "namespace=x",
            "--param",
            "limit=1",
            "--param",
            "n})DETACH=1",
        ],
    )
    assert bad.exit_code == 1 and len(bad.stderr.strip().splitlines()) == 1
    assert counts(driver, victim_store.namespace) == victim_counts


# -- Lucene syntax in keyword search --------------------------------------------------------------

LUCENE = [
    "alpha AND NOT beta",
    "content:alpha",
    "alpha*",
    "*",
    "?",
    "alpha~2",
    '"alpha',
    "(alpha",
    "alpha)",
    "[a TO z]",
    "{a TO z}",
    "\\",
    "/alph.*/",
    "alpha^10",
    "&&",
    "||",
    "!",
    "-alpha",
    "+alpha",
    "NOT",
    "AND OR",
    "namespace:victim",
    "*:*",
    "alpha\u0000beta",
    "\ufeffalpha",
    "a" * 5000,
    " ".join(["alpha"] * 3000),
    " ".join(f"w{i}" for i in range(3000)),
    "".join(chr(0x4E00 + i) for i in range(3000)),
]


@pytest.mark.parametrize("query", LUCENE, ids=[q[:20] for q in LUCENE])
def test_lucene_syntax_in_keyword_search_neither_breaks_nor_widens(store, hashing_embedder, query):
    for i, text in enumerate(["alpha beta gamma", "delta epsilon", "beta only here"]):
        doc, chunks = _doc(store, f"lucene/{i}.txt", text=text, embedder=hashing_embedder)
        store.store_document(doc, chunks)
    terms = set(escape_lucene_query(query).split())
    hits = store.search_chunks_keyword(query, 10)
    for h in hits:
        words = set(re.findall(r"\w+", h.content.lower()))
        assert words & terms, f"{query!r} found {h.content!r}, which has none of its terms"
    if not terms:
        assert hits == []


# -- property-based: nothing crashes with an unhandled exception ----------------------------------


@settings(max_examples=150, deadline=None)
@given(content=st.binary(max_size=3000), ctype=st.sampled_from(["text/plain", "text/html", "text/markdown", "application/pdf"]))
def test_extractors_return_text_or_a_library_error(content, ctype):
    try:
        text = ExtractorRegistry.default().extract(content, content_type=ctype)
    except KgragError:
        return
    assert isinstance(text, str) and text.strip()


@settings(max_examples=60, deadline=None)
@given(body=st.binary(max_size=400))
def test_a_broken_pdf_is_an_extraction_error(body):
    try:
        ExtractorRegistry.default().extract(b"%PDF-1.4\n" + body, content_type="application/pdf")
    except KgragError:
        pass


@settings(max_examples=150, deadline=None)
@given(text=st.text(max_size=3000), max_tokens=st.integers(1, 300), markdown=st.booleans())
def test_chunkers_never_crash_and_keep_the_budget(text, max_tokens, markdown):
    chunker = (
        MarkdownChunker(max_tokens=max_tokens, overlap_tokens=0)
        if markdown
        else RecursiveChunker(max_tokens=max_tokens, overlap_tokens=0)
    )
    pieces = chunker.chunk(text)
    assert isinstance(pieces, list) and all(isinstance(p.content, str) for p in pieces)


_IDS = ["c1", "c2", "c3"]
_EDGE = st.fixed_dictionaries(
    {},
    optional={
        "source": st.sampled_from(_IDS + ["[c1]", "x", ""]) | st.integers() | st.none(),
        "target": st.sampled_from(_IDS + ["[c2] ", "y"]) | st.floats(),
        "relation": st.sampled_from([r.value for r in RelationType] + ["ELABORATES ", "owns", ""]) | st.integers(),
        "weight": st.floats() | st.integers(-2, 2) | st.text(max_size=4) | st.booleans(),
        "description": st.text(max_size=20) | st.none() | st.integers(),
    },
)


@settings(max_examples=200, deadline=None)
@given(
    answer=st.one_of(
        st.text(max_size=500),
        st.builds(lambda edges: json.dumps({"edges": edges}), st.lists(_EDGE, max_size=6)),
        st.builds(
            lambda edges, pre: pre + "```json\n" + json.dumps(edges) + "\n```", st.lists(_EDGE, max_size=6), st.text(max_size=30)
        ),
        JSON.map(json.dumps),
    )
)
def test_parse_edges_keeps_only_valid_edges_or_raises_a_response_error(answer):
    try:
        edges = parse_edges(answer, _IDS)
    except ProviderResponseError:
        return
    for e in edges:
        assert e.source_id in _IDS and e.target_id in _IDS and e.source_id != e.target_id
        assert isinstance(e.relation, RelationType) and 0.0 < e.weight <= 1.0 and math.isfinite(e.weight)
        assert isinstance(e.description, str)


_TRIPLE_ITEM = st.fixed_dictionaries(
    {},
    optional={
        "subject": st.text(max_size=40) | st.integers() | st.none(),
        "predicate": st.sampled_from(["caused_by", "Caused By", "related-to", "owns", ""]) | st.text(max_size=10),
        "object": st.text(max_size=600) | st.none(),
        "metadata": JSON,
    },
)


@settings(max_examples=200, deadline=None)
@given(
    answer=st.one_of(
        st.text(max_size=600),
        st.lists(st.tuples(st.text(max_size=20), st.text(max_size=12), st.text(max_size=20)).map("|".join), max_size=8).map(
            "\n".join
        ),
        st.lists(_TRIPLE_ITEM, max_size=6).map(json.dumps),
        st.lists(_TRIPLE_ITEM, max_size=6).map(lambda items: json.dumps({"triples": items})),
    )
)
def test_parse_triples_never_crashes_and_keeps_only_allowed_predicates(answer):
    registry = PredicateRegistry()
    parsed = parse_triples(answer, registry)
    assert parsed.dropped == len(parsed.problems)
    for t in parsed.triples:
        assert t.predicate in registry and t.subject.strip() and t.object.strip()
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in t.metadata.items())


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=80))
def test_parse_param_gives_an_identifier_or_an_input_error(text):
    try:
        key, value = parse_param(text)
    except InputError:
        return
    assert key.isidentifier()
    json.dumps(value)


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=80))
def test_parse_filter_gives_a_filter_or_an_input_error(text):
    try:
        f = parse_filter(text)
    except InputError:
        return
    param = filters_to_param([f])
    assert set(param) == {"document_ids", "source_prefix", "meta_pairs", "created_after", "created_before"}


@settings(max_examples=300, deadline=None)
@given(name=st.text(max_size=200))
def test_namespace_validation_gives_a_name_or_a_configuration_error(name):
    invisible = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}
    try:
        assert validate_namespace(name) == name
    except ConfigurationError as exc:
        assert re.match(
            r"namespace (must|is longer|.* starts or ends with a space|.* is not in Unicode normal form"
            r"|.* mixes the letters of)",
            str(exc),
            re.S,
        )
        assert "\n" not in str(exc) or "\n" in name
        return
    # what is accepted prints as itself and as nothing else
    assert name == name.strip() and len(name) <= 128
    assert not any(unicodedata.category(c) in invisible for c in name)
    assert unicodedata.normalize("NFKC", name) == name


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=300))
def test_lucene_escaping_leaves_only_plain_terms(text):
    escaped = escape_lucene_query(text)
    assert re.fullmatch(r"[\w ]*", escaped)
    assert not set(escaped.split()) & {"AND", "OR", "NOT", "TO"}


# -- property-based against the database -----------------------------------------------------------


@DB_SETTINGS
@given(query=st.text(max_size=200))
def test_any_keyword_query_runs(store, hashing_embedder, query):
    store.search_chunks_keyword(query, 5)


@DB_SETTINGS
@given(key=st.text(min_size=1, max_size=40), value=JSON)
def test_any_filter_value_runs_and_matches_what_was_stored(store, hashing_embedder, key, value):
    metadata = {key: value}
    doc, chunks = _doc(store, "meta/" + content_hash(repr((key, value)))[:16], metadata=metadata, embedder=hashing_embedder)
    try:
        store.store_document(doc, chunks)
    except InputError:
        return  # not JSON-serialisable: refused before anything was written
    assert store.get_document(doc.id).metadata == json.loads(json.dumps(metadata))
    vector = hashing_embedder.embed(["alpha"])[0]
    if value is None:
        return  # a None value is "no value": it matches nothing (types.meta_pairs)
    found = store.search_chunks(vector, 50, [by_meta(key, value), by_document(doc.id)])
    assert {r.document_id for r in found} == {doc.id}
    store.search_chunks_keyword("alpha", 5, [by_meta(key, value), by_source(key)])


#: names a namespace may take (settings.validate_namespace): the visible characters of one
#: script, with digits, punctuation and spaces inside
_ALPHABETS = [
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZàéîõüßø",
    "абвгдежзийклмнопрстуфхцчшщъыьэюяАБВГДЕЖЗИЙ",
    "αβγδεζηθικλμνξοπρστυφχψωΑΒΓΔΕ",
    "日本語漢字中文ひらがなカタカナ",
    "한국어조선말",
    "العربية",
    "עברית",
]
VALID_NAMES = (
    st.sampled_from(_ALPHABETS)
    .flatmap(
        lambda letters: st.text(
            st.sampled_from(letters + "0123456789 -_.:/'\"`$!{}()[]<>;=@#%&*+,?|~^"), min_size=1, max_size=126
        )
    )
    .map(str.strip)
    .filter(lambda n: bool(n) and unicodedata.normalize("NFKC", n) == n)
)


@DB_SETTINGS
@given(name=VALID_NAMES)
def test_any_valid_namespace_name_round_trips(driver, neo4j_settings, schema_ready, hashing_embedder, name):
    name = "0" + name  # never a name another test uses (theirs start with a letter)
    assert validate_namespace(name) == name
    store = Neo4jStore(driver, namespace=name, database=neo4j_settings.database)
    doc, chunks = _doc(store, "ns.txt", embedder=hashing_embedder)
    store.store_document(doc, chunks)
    try:
        assert [d.id for d in store.list_documents()] == [doc.id]
        assert {r.document_id for r in store.search_chunks(hashing_embedder.embed(["alpha"])[0], 5)} == {doc.id}
    finally:
        store.delete_document(doc.id)
