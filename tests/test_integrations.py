"""The LangChain and LlamaIndex adapters, with the real libraries, over kgrag retrievers on
the real server, sync and async."""

from __future__ import annotations

import asyncio

import pytest

from kgrag_neo4j.entities.pipeline import build_entities
from kgrag_neo4j.errors import ConfigurationError
from kgrag_neo4j.ingestion.chunkers import RecursiveChunker
from kgrag_neo4j.ingestion.ingestor import Ingestor
from kgrag_neo4j.options import IngestGraphOptions
from kgrag_neo4j.retrieval.modes import MODES, build_retriever
from kgrag_neo4j.retrieval.retrievers import GraphRetriever, HybridRetriever, VectorRetriever

TEXTS = {
    "indexes.md": "# Indexes\n\nNeo4j creates vector indexes with CREATE VECTOR INDEX. "
    "A vector index stores embeddings of chunks.\n\n## Full-text\n\nFull-text indexes use Lucene for keyword search.",
    "cats.md": "# Cats\n\nCats sleep most of the day and purr when content.",
}


@pytest.fixture
def corpus(store, hashing_embedder):
    ingestor = Ingestor(
        store, hashing_embedder, graph=IngestGraphOptions(sequence_edges=True),
        chunker=RecursiveChunker(max_tokens=16, overlap_tokens=0),
    )  # fmt: skip
    ids = [ingestor.ingest_text(text, source=name, title=name).document_id for name, text in TEXTS.items()]
    build_entities(store, hashing_embedder)  # for the entity, local and ppr modes
    yield store
    for document_id in ids:
        store.delete_document(document_id)


#: options given per mode, as `kgrag search --mode M` would pass them to build_retriever
MODE_OPTIONS = {"graph": {"max_hops": 2}, "ppr": {"seed_top_k": 5}, "entity": {"max_hops": 1}, "local": {"top_k_entities": 5}}


def retrievers(store, embedder):
    """One retriever per mode, built the way the CLI builds them (``modes.build_retriever``)."""
    return {mode: build_retriever(mode, store, embedder, **MODE_OPTIONS.get(mode, {})) for mode in MODES}


QUERY = "vector index embeddings"


@pytest.mark.parametrize("mode", MODES)
def test_langchain_documents_match_the_kgrag_results(corpus, hashing_embedder, mode):
    from langchain_core.documents import Document

    from kgrag_neo4j.integrations.langchain import KgragRetriever

    inner = retrievers(corpus, hashing_embedder)[mode]
    expected = inner.retrieve(QUERY, 3)
    adapter = KgragRetriever(retriever=inner, top_k=3)
    docs = adapter.invoke(QUERY)
    assert docs and all(isinstance(d, Document) for d in docs)
    assert [d.id for d in docs] == [r.id for r in expected]
    assert [d.id for d in asyncio.run(adapter.ainvoke(QUERY))] == [d.id for d in docs]
    assert [d.page_content for d in docs] == [r.content for r in expected]
    first = docs[0].metadata
    assert first["score"] == pytest.approx(expected[0].score)
    assert first["source"] in TEXTS and first["document_id"] == expected[0].document_id
    assert set(first["scores"]) == set(expected[0].scores.as_dict())


def test_langchain_graph_context_and_async_and_a_chain(corpus, hashing_embedder):
    from langchain_core.runnables import RunnableLambda

    from kgrag_neo4j.integrations.langchain import KgragRetriever

    retriever = KgragRetriever(retriever=GraphRetriever(corpus, hashing_embedder, max_hops=2, seed_top_k=1), top_k=5)
    docs = retriever.invoke(QUERY)
    reached = [d for d in docs if d.metadata["graph_context"]]
    assert reached, "sequence edges should bring in a graph-found chunk"
    context = reached[0].metadata["graph_context"][0]
    assert context["relation"] == "sequence" and context["from_chunk_id"] in {d.id for d in docs}

    async_docs = asyncio.run(retriever.ainvoke(QUERY))
    assert [d.id for d in async_docs] == [d.id for d in docs]

    chain = retriever | RunnableLambda(lambda found: "\n".join(d.metadata["source"] for d in found))
    assert "indexes.md" in chain.invoke(QUERY).splitlines()
    assert len(retriever.invoke(QUERY, top_k=1)) == 1


@pytest.mark.parametrize("mode", MODES)
def test_llamaindex_nodes_match_the_kgrag_results(corpus, hashing_embedder, mode):
    from llama_index.core.schema import MetadataMode, NodeRelationship, NodeWithScore

    from kgrag_neo4j.integrations.llamaindex import KgragRetriever

    inner = retrievers(corpus, hashing_embedder)[mode]
    expected = inner.retrieve(QUERY, 3)
    retriever = KgragRetriever(retriever=inner, top_k=3)
    nodes = retriever.retrieve(QUERY)
    assert nodes and all(isinstance(n, NodeWithScore) for n in nodes)
    assert [n.node.node_id for n in nodes] == [r.id for r in expected]
    assert [n.score for n in nodes] == pytest.approx([r.score for r in expected])
    node = nodes[0].node
    assert node.relationships[NodeRelationship.SOURCE].node_id == expected[0].document_id
    shown = node.get_content(metadata_mode=MetadataMode.LLM)
    assert expected[0].content in shown and f"source: {expected[0].source}" in shown
    assert "graph_context" not in shown and "chunk_id" not in shown

    async_nodes = asyncio.run(retriever.aretrieve(QUERY))
    assert [n.node.node_id for n in async_nodes] == [n.node.node_id for n in nodes]


def test_llamaindex_query_engine_uses_the_retriever(corpus, hashing_embedder):
    """A LlamaIndex pipeline end to end: RetrieverQueryEngine with its built-in MockLLM (no
    network) synthesises from the nodes kgrag returned."""
    from llama_index.core.llms import MockLLM
    from llama_index.core.query_engine import RetrieverQueryEngine

    from kgrag_neo4j.integrations.llamaindex import KgragRetriever

    retriever = KgragRetriever(retriever=HybridRetriever(corpus, hashing_embedder), top_k=2)
    engine = RetrieverQueryEngine.from_args(retriever, llm=MockLLM())
    response = engine.query(QUERY)
    assert [n.node.node_id for n in response.source_nodes] == [n.node.node_id for n in retriever.retrieve(QUERY)]
    assert response.source_nodes[0].node.metadata["source"] in TEXTS


def test_adapters_refuse_what_is_not_a_retriever():
    from kgrag_neo4j.integrations import langchain, llamaindex

    for module in (langchain, llamaindex):
        with pytest.raises(ConfigurationError, match="kgrag retriever"):
            module.KgragRetriever(retriever=object(), top_k=5)
        with pytest.raises(ConfigurationError, match="top_k"):
            module.KgragRetriever(retriever=VectorRetriever(None, None), top_k=0)


@pytest.mark.parametrize("adapter", ["langchain", "llamaindex"])
def test_adapters_build_the_retriever_of_a_mode(corpus, hashing_embedder, adapter):
    """``KgragRetriever.from_mode`` is ``build_retriever``: the same results, and an option the
    mode cannot honour refused as the CLI refuses it."""
    import importlib

    KgragRetriever = importlib.import_module(f"kgrag_neo4j.integrations.{adapter}").KgragRetriever
    retriever = KgragRetriever.from_mode("graph", corpus, hashing_embedder, top_k=3, max_hops=2)
    expected = build_retriever("graph", corpus, hashing_embedder, max_hops=2).retrieve(QUERY, 3)
    got = retriever.invoke(QUERY) if adapter == "langchain" else retriever.retrieve(QUERY)
    ids = [d.id for d in got] if adapter == "langchain" else [n.node.id_ for n in got]
    assert ids == [r.id for r in expected] and ids
    with pytest.raises(ConfigurationError, match="max_hops"):
        KgragRetriever.from_mode("vector", corpus, hashing_embedder, max_hops=2)
