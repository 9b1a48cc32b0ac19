"""The async API on the real server: ``await retriever.aretrieve(query, top_k)`` for every
retriever gives what ``retrieve`` gives, reading through the driver's AsyncDriver (not the sync
driver in a thread); many concurrent calls in one event loop overlap; ``aingest_paths``."""

from __future__ import annotations

import asyncio

import pytest

from kgrag_neo4j.entities.pipeline import build_entities
from kgrag_neo4j.errors import ConfigurationError
from kgrag_neo4j.ingestion.chunkers import RecursiveChunker
from kgrag_neo4j.ingestion.ingestor import Ingestor
from kgrag_neo4j.options import IngestGraphOptions
from kgrag_neo4j.retrieval.entity import EntityGraphRetriever
from kgrag_neo4j.retrieval.local_search import LocalSearchRetriever
from kgrag_neo4j.retrieval.ppr import PPRRetriever
from kgrag_neo4j.retrieval.retrievers import GraphRetriever, HybridRetriever, VectorRetriever
from kgrag_neo4j.retrieval.triples import TripleGraphRetriever
from kgrag_neo4j.store import Neo4jStore
from kgrag_neo4j.store import aio as aio_module
from kgrag_neo4j.types.triples import Triple

TEXTS = {
    "indexes.md": "Neo4j creates vector indexes with CREATE VECTOR INDEX. Alice maintains the Neo4j indexes. "
    "Lucene serves the full-text indexes of Neo4j. Bob tunes Lucene analyzers for Acme.",
    "people.md": "Alice works for Acme in Paris. Acme builds search tools on Neo4j and Lucene. "
    "Bob and Alice wrote the Acme indexing guide together.",
}
QUERIES = ["vector indexes in Neo4j", "who works for Acme", "Lucene full-text search"]


@pytest.fixture
def corpus(store, hashing_embedder):
    ingestor = Ingestor(
        store, hashing_embedder, graph=IngestGraphOptions(sequence_edges=True),
        chunker=RecursiveChunker(max_tokens=16, overlap_tokens=0),
    )  # fmt: skip
    ids = [ingestor.ingest_text(text, source=name, title=name).document_id for name, text in TEXTS.items()]
    build_entities(store, hashing_embedder)
    chunk = store.search_chunks(hashing_embedder.embed(["Alice Acme"], input_type="query")[0], 1)[0].id
    store.add_triples(
        [Triple("Alice", "related_to", "Acme", {"chunk_id": chunk}), Triple("Acme", "related_to", "Berlin office", {})]
    )
    yield store
    for document_id in ids:
        store.delete_document(document_id)
    store.clear_triples()


def all_retrievers(store, embedder):
    return {
        "vector": VectorRetriever(store, embedder),
        "hybrid": HybridRetriever(store, embedder),
        "graph": GraphRetriever(store, embedder, max_hops=2, seed_top_k=2),  # blend="propagate"
        "graph-seed-blend": GraphRetriever(store, embedder, max_hops=2, seed_top_k=2, blend="seed"),
        "graph-hybrid-seeds": GraphRetriever(store, embedder, seed_top_k=2, seed_keyword_weight=0.3, bidirectional=True),
        "ppr": PPRRetriever(store, embedder),
        "entity": EntityGraphRetriever(store, embedder, max_hops=2, centrality="pagerank"),
        "local": LocalSearchRetriever(store, embedder),
        "triple": TripleGraphRetriever(store, embedder),
    }


def summary(results):
    return [(r.id, round(r.score, 9), [g.from_chunk_id for g in r.graph_context], list(r.explanation)) for r in results]


@pytest.mark.parametrize(
    "kind", ["vector", "hybrid", "graph", "graph-seed-blend", "graph-hybrid-seeds", "ppr", "entity", "local", "triple"]
)
def test_aretrieve_matches_retrieve_and_reads_on_the_async_driver(corpus, hashing_embedder, kind):
    retriever = all_retrievers(corpus, hashing_embedder)[kind]
    for query in QUERIES:
        expected = retriever.retrieve(query, 4)
        sync_before, async_before = corpus.runner.round_trips, corpus.aio.round_trips
        got = asyncio.run(retriever.aretrieve(query, 4))
        assert summary(got) == summary(expected), (kind, query)
        assert corpus.runner.round_trips == sync_before, "aretrieve used the sync driver"
        assert corpus.aio.round_trips > async_before
    assert expected, f"{kind} found nothing: the comparison proved little"


@pytest.mark.parametrize("native", [True, False], ids=["one-statement", "per-hop"])
@pytest.mark.parametrize("blend", ["propagate", "seed"])
def test_graph_aretrieve_under_both_blends_and_both_paths(corpus, hashing_embedder, blend, native):
    """Graph retrieval's two paths under each blend: the one statement (entity keys and blend
    passed to ``agraph_retrieve``) and the per-hop loop (seeds, entity seeds and their own
    closeness read on the async driver, the traversal in a worker thread) give what
    ``retrieve`` gives; under "propagate" chunks mentioning an entity the query names are seeds."""
    retriever = GraphRetriever(corpus, hashing_embedder, max_hops=2, seed_top_k=2, blend=blend, native=native)
    named = graph_found = False
    for query in QUERIES:
        expected = retriever.retrieve(query, 4)
        sync_before, async_before = corpus.runner.round_trips, corpus.aio.round_trips
        got = asyncio.run(retriever.aretrieve(query, 4))
        assert summary(got) == summary(expected), (blend, native, query)
        assert corpus.aio.round_trips > async_before
        if native:
            assert corpus.runner.round_trips == sync_before, "aretrieve used the sync driver"
        named |= any("named in the query" in line for r in expected for line in r.explanation)
        graph_found |= any(r.graph_context for r in expected)
    assert graph_found, "no result came through an edge: the traversal went untested"
    assert named == (blend == "propagate")


@pytest.mark.parametrize("named", [True, False])
def test_entity_aretrieve_passes_the_named_query_entities(corpus, hashing_embedder, named):
    """``named_query_entities`` reaches ``aentity_boost_context`` (its ``entity_keys``): the
    entity the query names joins the query entities (score null) on the async driver too."""
    retriever = EntityGraphRetriever(corpus, hashing_embedder, max_hops=1, named_query_entities=named)
    query = "who works for Acme"
    expected = retriever.retrieve(query, 4)
    sync_named = {q["name"] for q in retriever.last_trace.query_entities if q["score"] is None}
    got = asyncio.run(retriever.aretrieve(query, 4))
    async_named = {q["name"] for q in retriever.last_trace.query_entities if q["score"] is None}
    assert summary(got) == summary(expected)
    assert async_named == sync_named
    assert ("Acme" in async_named) == named


def test_every_async_store_read_takes_what_its_sync_twin_takes():
    """A parameter added to a store read (graph_retrieve's blend, entity_boost_context's
    entity_keys, ...) exists on its ``await a<name>`` twin too, with the same default."""
    import inspect

    pairs = [
        (name, getattr(Neo4jStore, name[1:]))
        for name in dir(Neo4jStore)
        if name.startswith("a")
        and inspect.iscoroutinefunction(getattr(Neo4jStore, name))
        and callable(getattr(Neo4jStore, name[1:], None))
    ]
    assert {
        "agraph_retrieve",
        "aentity_boost_context",
        "alocal_context",
        "ascore_chunks",
        "aquery_entity_chunks",
        "appr_neighbourhood",
        "asearch_chunks",
    } <= {n for n, _ in pairs}
    for name, sync in pairs:
        twin = inspect.signature(getattr(Neo4jStore, name)).parameters
        assert twin == inspect.signature(sync).parameters, name


def test_triple_search_async_has_both_phases(corpus, hashing_embedder):
    retriever = TripleGraphRetriever(corpus, hashing_embedder)
    sync = retriever.search("Alice Acme", top_k=2)
    got = asyncio.run(retriever.asearch("Alice Acme", top_k=2))
    assert got.to_json() == sync.to_json() and got.expanded


def test_many_concurrent_aretrieve_calls_overlap_in_one_event_loop(corpus, hashing_embedder, monkeypatch):
    """24 retrievals gathered in one loop: the database reads are in flight together (the
    most at once is counted around the async runner's real read), and the sync driver is not
    used at all."""
    in_flight = {"now": 0, "most": 0}
    real_read = aio_module.AsyncCypherRunner.read

    async def counting_read(self, name, /, **params):
        in_flight["now"] += 1
        in_flight["most"] = max(in_flight["most"], in_flight["now"])
        try:
            return await real_read(self, name, **params)
        finally:
            in_flight["now"] -= 1

    monkeypatch.setattr(aio_module.AsyncCypherRunner, "read", counting_read)
    retrievers = [HybridRetriever(corpus, hashing_embedder), GraphRetriever(corpus, hashing_embedder, seed_top_k=2)]
    calls = [(retrievers[i % 2], QUERIES[i % 3]) for i in range(24)]
    expected = [summary(r.retrieve(q, 3)) for r, q in calls]
    sync_before = corpus.runner.round_trips

    async def main():
        return await asyncio.gather(*(r.aretrieve(q, 3) for r, q in calls))

    got = asyncio.run(main())
    assert [summary(g) for g in got] == expected
    assert in_flight["most"] >= 2, "the reads ran one after another"
    assert corpus.runner.round_trips == sync_before


def test_adapters_await_aretrieve(corpus, hashing_embedder):
    from kgrag_neo4j.integrations.langchain import KgragRetriever as LangChainRetriever
    from kgrag_neo4j.integrations.llamaindex import KgragRetriever as LlamaRetriever

    inner = GraphRetriever(corpus, hashing_embedder, seed_top_k=2)
    expected = [r.id for r in inner.retrieve("Lucene full-text search", 3)]
    sync_before, async_before = corpus.runner.round_trips, corpus.aio.round_trips

    async def main():
        docs = await LangChainRetriever(retriever=inner, top_k=3).ainvoke("Lucene full-text search")
        nodes = await LlamaRetriever(retriever=inner, top_k=3).aretrieve("Lucene full-text search")
        return docs, nodes

    docs, nodes = asyncio.run(main())
    assert [d.id for d in docs] == expected == [n.node.node_id for n in nodes]
    assert corpus.runner.round_trips == sync_before and corpus.aio.round_trips >= async_before + 2


def test_each_event_loop_gets_a_driver_closed_with_it(corpus, hashing_embedder, monkeypatch):
    opened = []
    real = aio_module.connect_async_driver

    def recording(settings, **kwargs):
        opened.append(real(settings, **kwargs))
        return opened[-1]

    monkeypatch.setattr(aio_module, "connect_async_driver", recording)
    retriever = VectorRetriever(corpus, hashing_embedder)
    for _ in range(3):
        assert asyncio.run(retriever.aretrieve("indexes", 2))
    assert len(opened) == 3 and all(getattr(d, "_closed", False) for d in opened)

    async def twice():
        await retriever.aretrieve("indexes", 2)
        await retriever.aretrieve("Acme", 2)
        await corpus.aclose()
        return True

    assert asyncio.run(twice()) and len(opened) == 4 and getattr(opened[-1], "_closed", False)


def test_async_reads_need_settings_or_an_async_driver(driver, neo4j_settings, schema_ready, namespace, hashing_embedder):
    bare = Neo4jStore(driver, namespace=namespace, database=neo4j_settings.database)
    with pytest.raises(ConfigurationError, match="async reads need"):
        asyncio.run(VectorRetriever(bare, hashing_embedder).aretrieve("q", 1))

    async def given():
        async_driver = aio_module.connect_async_driver(neo4j_settings)
        try:
            store = Neo4jStore(driver, namespace=namespace, database=neo4j_settings.database, async_driver=async_driver)
            return await VectorRetriever(store, hashing_embedder).aretrieve("q", 1), async_driver
        finally:
            await async_driver.close()

    results, async_driver = asyncio.run(given())
    assert results == [] and getattr(async_driver, "_closed", False)


def test_aingest_paths_keeps_the_loop_free_and_reports_each_file(store, hashing_embedder, tmp_path):
    folder = tmp_path / "kb"
    folder.mkdir()
    (folder / "a.md").write_text("# A\n\nNeo4j stores graphs.")
    (folder / "b.txt").write_text("Lucene indexes text.")
    (folder / "empty.md").write_text("   ")
    ingestor = Ingestor(store, hashing_embedder)

    async def main():
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                await asyncio.sleep(0)
                ticks += 1

        task = asyncio.create_task(ticker())
        results = await ingestor.aingest_paths([folder])
        task.cancel()
        found = await VectorRetriever(store, hashing_embedder).aretrieve("Neo4j graphs", 1)
        return results, ticks, found

    results, ticks, found = asyncio.run(main())
    by_name = {r.path.rsplit("/", 1)[-1]: r for r in results}
    assert by_name["a.md"].result.status == "new" and by_name["b.txt"].ok
    assert not by_name["empty.md"].ok and "empty" in by_name["empty.md"].error
    assert ticks > 0, "the event loop never ran while files were ingested"
    assert found[0].source.endswith("a.md")
    for r in results:
        if r.ok:
            store.delete_document(r.result.document_id)
