"""The Store contract on the real server: one copy per document, atomic replace, cascading
delete, vector and keyword search, filters that keep their recall, namespace isolation."""

from __future__ import annotations

import random

import numpy as np
import pytest

from kgrag_neo4j import ids
from kgrag_neo4j.errors import DimensionMismatchError, InputError, NotFoundError
from kgrag_neo4j.protocols import DocumentChunkLister, KeywordSearcher, Store
from kgrag_neo4j.types import (
    Chunk,
    Document,
    by_document,
    by_meta,
    by_source,
    created_after,
    created_before,
    filters_to_param,
)

from .conftest import TEST_DIMENSIONS


def make_doc(
    store, source: str, texts: list[str], embedder, *, metadata=None, created_at=0, chunk_meta=None
) -> tuple[Document, list[Chunk]]:
    content = "\n\n".join(texts)
    doc = Document(
        id=ids.document_id(store.namespace, source),
        source=source,
        title=source.rsplit("/", 1)[-1],
        content=content,
        content_hash=ids.content_hash(content),
        metadata=metadata or {},
        created_at=created_at,
    )
    vectors = embedder.embed(texts)
    chunks = [
        Chunk(
            id=ids.chunk_id(doc.id, "flat", i, t),
            document_id=doc.id,
            content=t,
            chunk_index=i,
            embedding=v,
            token_count=len(t) // 4,
            metadata=(chunk_meta or {}).get(i, {}),
        )
        for i, (t, v) in enumerate(zip(texts, vectors))
    ]
    return doc, chunks


def graph_counts(driver, namespace: str) -> dict[str, int]:
    records, _, _ = driver.execute_query(
        "MATCH (n {namespace: $ns}) WITH count(n) AS nodes "
        "OPTIONAL MATCH (a {namespace: $ns})-[r]-() RETURN nodes, count(DISTINCT r) AS rels",
        ns=namespace,
    )
    return dict(records[0])


def test_capabilities(store):
    assert isinstance(store, Store) and isinstance(store, KeywordSearcher) and isinstance(store, DocumentChunkLister)


def test_store_get_list_and_reingest_changes_nothing(store, driver, hashing_embedder):
    doc, chunks = make_doc(store, "docs/a.md", ["alpha one", "beta two", "gamma three"], hashing_embedder)
    assert store.store_document(doc, chunks) == "new"
    before = graph_counts(driver, store.namespace)
    assert store.store_document(doc, chunks) == "unchanged"
    assert graph_counts(driver, store.namespace) == before == {"nodes": 4, "rels": 3}
    got = store.get_document(doc.id)
    assert (got.source, got.title, got.content) == ("docs/a.md", "a.md", doc.content)
    assert [d.id for d in store.list_documents()] == [doc.id]
    assert [c.content for c in store.list_document_chunks(doc.id)] == ["alpha one", "beta two", "gamma three"]


def test_changed_document_replaces_the_old_version(store, driver, hashing_embedder):
    doc, chunks = make_doc(store, "a.txt", ["keep me", "old text"], hashing_embedder)
    store.store_document(doc, chunks)
    doc2, chunks2 = make_doc(store, "a.txt", ["keep me", "new text", "more new"], hashing_embedder)
    assert doc2.id == doc.id
    assert store.store_document(doc2, chunks2) == "replaced"
    assert [c.content for c in store.list_document_chunks(doc.id)] == ["keep me", "new text", "more new"]
    assert graph_counts(driver, store.namespace) == {"nodes": 4, "rels": 3}
    # the unchanged chunk kept its id (and would keep its edges and mentions)
    assert chunks[0].id == chunks2[0].id


def test_a_failing_replace_leaves_the_old_version(store, hashing_embedder):
    doc, chunks = make_doc(store, "a.txt", ["first", "second"], hashing_embedder)
    store.store_document(doc, chunks)
    other, other_chunks = make_doc(store, "b.txt", ["other"], hashing_embedder)
    store.store_document(other, other_chunks)
    doc2, chunks2 = make_doc(store, "a.txt", ["changed"], hashing_embedder)
    chunks2[0].id = other_chunks[0].id  # collides with a chunk of b.txt: refused inside the tx
    with pytest.raises(InputError, match="already belongs"):
        store.store_document(doc2, chunks2)
    assert [c.content for c in store.list_document_chunks(doc.id)] == ["first", "second"]
    assert store.get_document(doc.id).content_hash == doc.content_hash


def test_delete_cascades_and_leaves_nothing(store, driver, hashing_embedder):
    doc, chunks = make_doc(store, "a.txt", ["one", "two"], hashing_embedder)
    store.store_document(doc, chunks)
    from kgrag_neo4j.types import ChunkEdge, RelationType

    store.store_edges([ChunkEdge(chunks[0].id, chunks[1].id, RelationType.SEQUENCE, 1.0)])
    assert store.delete_document(doc.id) is True
    assert graph_counts(driver, store.namespace) == {"nodes": 0, "rels": 0}
    assert store.delete_document(doc.id) is False
    with pytest.raises(NotFoundError, match="no document"):
        store.get_document(doc.id)


def test_parent_child_links(store, driver, hashing_embedder):
    doc = Document(id="pc-" + store.namespace, source="pc.txt", content="x", content_hash="h")
    parent = Chunk(id=f"{doc.id}-p", document_id=doc.id, content="parent text", chunk_index=0)
    kids = [
        Chunk(
            id=f"{doc.id}-c{i}",
            document_id=doc.id,
            content=f"child {i}",
            chunk_index=i,
            parent_id=parent.id,
            embedding=hashing_embedder.embed([f"child {i}"])[0],
        )
        for i in range(2)
    ]
    store.store_document(doc, kids + [parent])  # parent after its children: order does not matter
    records, _, _ = driver.execute_query(
        "MATCH (c:Chunk)-[:CHILD_OF]->(p:Chunk {id: $id}) RETURN count(c) AS n, p.embedding IS NULL AS bare", id=parent.id
    )
    assert dict(records[0]) == {"n": 2, "bare": True}
    with pytest.raises(InputError, match="not in this document"):
        store.store_document(
            Document(id="x-" + store.namespace, source="x", content="x", content_hash="x"),
            [Chunk(id="orphan-kid", document_id="", content="c", parent_id="missing")],
        )


def test_vector_search_orders_by_similarity(store, hashing_embedder):
    texts = ["the cat sat on the mat", "stock markets fell sharply", "a cat sleeping on a mat", "rain in spain"]
    doc, chunks = make_doc(store, "s.txt", texts, hashing_embedder)
    store.store_document(doc, chunks)
    q = hashing_embedder.embed(["cat on the mat"], input_type="query")[0]
    results = store.search_chunks(q, 2)
    assert [r.content for r in results] == ["the cat sat on the mat", "a cat sleeping on a mat"]
    assert results[0].score >= results[1].score and 0.0 <= results[1].score <= 1.0
    assert results[0].title == "s.txt" and results[0].scores.vector == results[0].score


def test_keyword_search_and_lucene_syntax_cannot_break_or_widen_it(store, hashing_embedder):
    texts = ["neo4j vector index", "full text search with lucene", "graph traversal in cypher"]
    doc, chunks = make_doc(store, "k.txt", texts, hashing_embedder)
    store.store_document(doc, chunks)
    assert [r.content for r in store.search_chunks_keyword("lucene", 5)] == ["full text search with lucene"]
    for hostile in ["lucene AND (", '"unterminated', "content:*", "*", "lucene~2 OR ]", "\\", "a:b:c", "NOT lucene"]:
        got = store.search_chunks_keyword(hostile, 5)
        assert all("lucene" in r.content or "not" in r.content for r in got), hostile
    assert store.search_chunks_keyword("*", 5) == []  # a wildcard is not a query here


@pytest.mark.parametrize(
    "filters, expected",
    [
        ([by_source("docs/")], {"docs/a.txt"}),
        ([by_source("other/")], {"other/b.txt"}),
        ([by_meta("lang", "en")], {"docs/a.txt"}),
        ([by_meta("section", "intro")], {"other/b.txt"}),
        ([by_meta("lang", "en"), by_source("other/")], set()),
        ([created_after(1500)], {"other/b.txt"}),
        ([created_before(1500)], {"docs/a.txt"}),
    ],
)
def test_filters_apply_to_vector_and_keyword_search(store, hashing_embedder, filters, expected):
    a, ca = make_doc(store, "docs/a.txt", ["shared words here"], hashing_embedder, metadata={"lang": "en"}, created_at=1000)
    b, cb = make_doc(
        store, "other/b.txt", ["shared words there"], hashing_embedder, created_at=2000, chunk_meta={0: {"section": "intro"}}
    )
    store.store_document(a, ca)
    store.store_document(b, cb)
    q = hashing_embedder.embed(["shared words"], input_type="query")[0]
    assert {r.source for r in store.search_chunks(q, 5, filters)} == expected
    assert {r.source for r in store.search_chunks_keyword("shared", 5, filters)} == expected
    by_doc = store.search_chunks(q, 5, [by_document(b.id)])
    assert [r.document_id for r in by_doc] == [b.id]


def test_a_one_percent_filter_keeps_full_recall(store):
    rng = random.Random(7)
    n, rare_every = 2000, 100
    vectors = np.array([[rng.gauss(0, 1) for _ in range(TEST_DIMENSIONS)] for _ in range(n)])
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    doc = Document(id="recall-" + store.namespace, source="recall.txt", content="r", content_hash="r")
    chunks = [
        Chunk(
            id=f"{doc.id}-{i}",
            document_id=doc.id,
            content=f"chunk {i}",
            chunk_index=i,
            embedding=vectors[i].tolist(),
            metadata={"group": "rare" if i % rare_every == 0 else "common"},
        )
        for i in range(n)
    ]
    store.store_document(doc, chunks)
    query = vectors[1] + 0.1 * vectors[2]  # close to common chunks: the index's top hits are not rare
    query /= np.linalg.norm(query)
    rare = [i for i in range(n) if i % rare_every == 0]
    truth = sorted(rare, key=lambda i: -float(vectors[i] @ query))[:10]
    got = store.search_chunks(query.tolist(), 10, [by_meta("group", "rare")])
    assert [r.id for r in got] == [f"{doc.id}-{i}" for i in truth]
    for r, i in zip(got, truth):
        assert r.score == pytest.approx((1 + float(vectors[i] @ query)) / 2, abs=1e-5)


def test_an_unfiltered_search_never_pays_for_the_exact_fallback(store):
    # the fallback scan must run only when the index's candidates fall short: a guard the
    # planner hoisted past once made every vector search read every chunk of the namespace
    rng = np.random.default_rng(3)
    # clustered round the query, so the index's first candidates are this namespace's whatever
    # else the server holds (other tenants' vectors must not decide what this test measures)
    vectors = rng.standard_normal((600, TEST_DIMENSIONS)) * 0.05
    vectors[:, 7] += 1.0
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    doc = Document(id="scan-" + store.namespace, source="scan.txt", content="s", content_hash="s")
    store.store_document(
        doc,
        [
            Chunk(id=f"{doc.id}-{i}", document_id=doc.id, content=f"chunk {i}", chunk_index=i, embedding=v.tolist())
            for i, v in enumerate(vectors)
        ],
    )
    params = dict(
        namespace=store.namespace,
        embedding=vectors[5].tolist(),
        top_k=10,
        fetch_k=40,
        filter=filters_to_param(()),
        vector_property="embedding",
        chunk_index="chunk_embedding",
    )
    unfiltered = store.runner.profile("chunks/search_vector", **params)
    assert unfiltered["rows"] == 10 and unfiltered["db_hits"] < 600
    short = store.runner.profile("chunks/search_vector", **{**params, "filter": filters_to_param([by_meta("group", "none")])})
    assert short["rows"] == 0 and short["db_hits"] >= 600  # the fallback did run: it reads the namespace


def test_namespaces_never_see_each_other(store, hashing_embedder, driver, make_namespace):
    other = store.with_namespace(make_namespace())
    for s in (store, other):
        doc, chunks = make_doc(s, "same.txt", ["identical content"], hashing_embedder)
        s.store_document(doc, chunks)
    a, b = store.list_documents(), other.list_documents()
    assert len(a) == len(b) == 1 and a[0].id != b[0].id
    q = hashing_embedder.embed(["identical content"])[0]
    assert {r.document_id for r in store.search_chunks(q, 10)} == {a[0].id}
    assert {r.document_id for r in other.search_chunks_keyword("identical", 10)} == {b[0].id}
    with pytest.raises(NotFoundError):
        store.get_document(b[0].id)
    assert store.get_chunks_by_ids([c.id for c in other.list_document_chunks(b[0].id)]) == []
    assert store.delete_document(b[0].id) is False
    assert len(other.list_documents()) == 1


@pytest.mark.parametrize(
    "mutate, error",
    [
        (lambda c: setattr(c, "embedding", [0.1] * 8), DimensionMismatchError),
        (lambda c: setattr(c, "embedding", [float("nan")] * TEST_DIMENSIONS), InputError),
        (lambda c: setattr(c, "metadata", {"bad": object()}), InputError),
    ],
)
def test_bad_chunks_are_refused_and_nothing_is_written(store, driver, hashing_embedder, mutate, error):
    doc, chunks = make_doc(store, "bad.txt", ["one", "two"], hashing_embedder)
    mutate(chunks[1])
    with pytest.raises(error):
        store.store_document(doc, chunks)
    assert graph_counts(driver, store.namespace) == {"nodes": 0, "rels": 0}


def test_query_embedding_of_the_wrong_size_names_both_sizes(store):
    with pytest.raises(DimensionMismatchError, match=f"3 dimensions.*{TEST_DIMENSIONS}"):
        store.search_chunks([0.1, 0.2, 0.3], 5)


def test_top_k_must_be_positive(store, hashing_embedder):
    with pytest.raises(InputError, match="top_k"):
        store.search_chunks(hashing_embedder.embed(["x"])[0], 0)
