"""kgrag-neo4j: a Neo4j-native Graph-RAG layer.

    from kgrag_neo4j import Neo4jStore, Neo4jSettings, Ingestor, GraphRetriever, HashingEmbedder

    store = Neo4jStore.connect(Neo4jSettings(uri="bolt://127.0.0.1:7687", password="..."))
    Ingestor(store, embedder).ingest_file("docs/guide.md")
    results = GraphRetriever(store, embedder, max_hops=2).retrieve("how do I ...?", 5)

Names resolve lazily, so ``import kgrag_neo4j`` loads neither a vendor SDK nor a model.
"""

from __future__ import annotations

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from typing import Any

try:
    __version__ = version("kgrag-neo4j")
except PackageNotFoundError:  # a source checkout that was never installed
    __version__ = "0.0.0"

#: public name -> module that defines it
_EXPORTS: dict[str, str] = {
    # errors
    "KgragError": "errors", "ConfigurationError": "errors", "InputError": "errors",
    "NotFoundError": "errors", "StoreError": "errors", "ConnectionFailed": "errors",
    "AuthenticationFailed": "errors", "DimensionMismatchError": "errors", "ProviderError": "errors",
    "Cancelled": "errors",
    # values and filters
    "Document": "types", "Chunk": "types", "ChunkEdge": "types", "RelationType": "types",
    "RetrievalResult": "types", "EdgeContext": "types", "ComponentScores": "types", "IngestResult": "types",
    "ChunkFilter": "types", "by_document": "types", "by_source": "types", "by_meta": "types",
    "created_after": "types", "created_before": "types",
    # ports
    "Store": "protocols", "KeywordSearcher": "protocols", "DocumentChunkLister": "protocols",
    "GraphStore": "protocols", "GraphTraverser": "protocols", "EntityStore": "protocols",
    "CommunityStore": "protocols", "EmbeddingProvider": "protocols", "ChatProvider": "protocols",
    "Reranker": "protocols", "Retriever": "protocols",
    # Neo4j
    "Neo4jSettings": "settings", "Neo4jStore": "store", "LocalServer": "server",
    # write path
    "Ingestor": "ingestion.ingestor", "IngestOptions": "ingestion.ingestor", "FileResult": "ingestion.ingestor",
    "IngestGraphOptions": "ingestion.edges",
    "RecursiveChunker": "ingestion.chunkers", "MarkdownChunker": "ingestion.chunkers",
    "SemanticChunker": "ingestion.chunkers", "ExtractorRegistry": "ingestion.extractors",
    # read path
    "VectorRetriever": "retrieval.retrievers", "HybridRetriever": "retrieval.retrievers",
    "GraphRetriever": "retrieval.retrievers", "GraphOptions": "retrieval.scoring",
    "EntityGraphRetriever": "retrieval.entity", "LocalSearchRetriever": "retrieval.local_search",
    "TripleGraphRetriever": "retrieval.triples",
    "ScoreReranker": "retrieval.rerank", "LLMReranker": "retrieval.rerank",
    "format_knowledge": "retrieval.format", "KnowledgeTool": "retrieval.knowledge_tool",
    "answer": "retrieval.answer", "aanswer": "retrieval.answer", "Answer": "retrieval.answer",
    "Citation": "retrieval.answer",
    # providers
    "HashingEmbedder": "providers.hashing", "WordLlamaEmbedder": "providers.wordllama",
    "SentenceTransformerEmbedder": "providers.sentence_transformers",
    "CohereEmbedder": "providers.cohere", "CohereChat": "providers.cohere", "CohereReranker": "providers.cohere",
    "OpenAIEmbedder": "providers.openai", "OpenAIChat": "providers.openai",
    "select_embedder": "providers.select", "select_chat": "providers.select",
    # entities, communities, triples
    "OfflineEntityExtractor": "entities.extract_offline", "LLMEntityExtractor": "entities.extract_llm",
    "Triple": "triples.model", "GraphBuffer": "triples.buffer",
    "ErrorResolutionRecorder": "triples.learning",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kgrag_neo4j' has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
