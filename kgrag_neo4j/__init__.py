"""kgrag-neo4j: a Neo4j-native Graph-RAG layer.

    from kgrag_neo4j import Neo4jStore, Neo4jSettings, Ingestor, GraphRetriever, HashingEmbedder

    store = Neo4jStore.connect(Neo4jSettings(uri="bolt://127.0.0.1:7687", password="..."))
    Ingestor(store, embedder).ingest_file("docs/guide.md")
    results = GraphRetriever(store, embedder, max_hops=2).retrieve("how do I ...?", 5)

Names resolve lazily, so ``import kgrag_neo4j`` loads neither a vendor SDK nor a model.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

#: public name -> module that defines it
_EXPORTS: dict[str, str] = {
    # errors
    "KgragError": "errors",
    "ConfigurationError": "errors",
    "InputError": "errors",
    "NotFoundError": "errors",
    "StoreError": "errors",
    "ConnectionFailed": "errors",
    "AuthenticationFailed": "errors",
    "DimensionMismatchError": "errors",
    "ProviderError": "errors",
    "Cancelled": "errors",
    # values and filters
    "Document": "types",
    "Chunk": "types",
    "ChunkEdge": "types",
    "RelationType": "types",
    "RetrievalResult": "types",
    "EdgeContext": "types",
    "ComponentScores": "types",
    "IngestResult": "types",
    "ChunkFilter": "types",
    "by_document": "types",
    "by_source": "types",
    "by_meta": "types",
    "created_after": "types",
    "created_before": "types",
    # ports
    "Store": "protocols",
    "KeywordSearcher": "protocols",
    "DocumentChunkLister": "protocols",
    "GraphStore": "protocols",
    "GraphTraverser": "protocols",
    "EntityStore": "protocols",
    "CommunityStore": "protocols",
    "EmbeddingProvider": "protocols",
    "ChatProvider": "protocols",
    "Reranker": "protocols",
    "Retriever": "protocols",
    # Neo4j
    "Neo4jSettings": "settings",
    "Neo4jStore": "store",
    "LocalServer": "server",
    # write path
    "Ingestor": "ingestion.ingestor",
    "IngestOptions": "options",
    "FileResult": "ingestion.outcomes",
    "IngestGraphOptions": "options",
    "RecursiveChunker": "ingestion.chunkers",
    "MarkdownChunker": "ingestion.chunkers",
    "SemanticChunker": "ingestion.chunkers",
    "ExtractorRegistry": "ingestion.extractors",
    # read path
    "VectorRetriever": "retrieval.retrievers",
    "HybridRetriever": "retrieval.retrievers",
    "GraphRetriever": "retrieval.retrievers",
    "GraphOptions": "options",
    "EntityGraphRetriever": "retrieval.entity",
    "LocalSearchRetriever": "retrieval.local_search",
    "TripleGraphRetriever": "retrieval.triples",
    "PPRRetriever": "retrieval.ppr",
    "MODES": "retrieval.modes",
    "build_retriever": "retrieval.modes",
    "RetrievalMode": "retrieval.declaration",
    "ModeOption": "retrieval.declaration",
    "declare_mode": "retrieval.declaration",
    "mode_option": "retrieval.declaration",
    "register_mode": "retrieval.registry",
    "get_mode": "retrieval.registry",
    "mode_names": "retrieval.registry",
    "ScoreReranker": "retrieval.rerank",
    "LLMReranker": "retrieval.rerank",
    "format_knowledge": "retrieval.format",
    "KnowledgeTool": "retrieval.knowledge_tool",
    "answer": "retrieval.answer",
    "aanswer": "retrieval.answer",
    "Answer": "retrieval.answer",
    "Citation": "retrieval.answer",
    # providers
    "HashingEmbedder": "providers.hashing",
    "WordLlamaEmbedder": "providers.wordllama",
    "MiniLMEmbedder": "providers.minilm",
    "SentenceTransformerEmbedder": "providers.sentence_transformers",
    "CohereEmbedder": "providers.cohere",
    "CohereChat": "providers.cohere",
    "CohereReranker": "providers.cohere",
    "OpenAIEmbedder": "providers.openai",
    "OpenAIChat": "providers.openai",
    "select_embedder": "providers.select",
    "select_chat": "providers.select",
    # entities, communities, triples
    "OfflineEntityExtractor": "entities.extract_offline",
    "LLMEntityExtractor": "entities.extract_llm",
    "Triple": "types.triples",
    "GraphBuffer": "triples.buffer",
    "ErrorResolutionRecorder": "triples.learning",
}

if TYPE_CHECKING:  # what type checkers and IDEs see (at run time __getattr__ imports on first use)
    from .entities.extract_llm import LLMEntityExtractor
    from .entities.extract_offline import OfflineEntityExtractor
    from .errors import (
        AuthenticationFailed,
        Cancelled,
        ConfigurationError,
        ConnectionFailed,
        DimensionMismatchError,
        InputError,
        KgragError,
        NotFoundError,
        ProviderError,
        StoreError,
    )
    from .ingestion.chunkers import MarkdownChunker, RecursiveChunker, SemanticChunker
    from .ingestion.extractors import ExtractorRegistry
    from .ingestion.ingestor import Ingestor
    from .ingestion.outcomes import FileResult
    from .options import GraphOptions, IngestGraphOptions, IngestOptions
    from .protocols import (
        ChatProvider,
        CommunityStore,
        DocumentChunkLister,
        EmbeddingProvider,
        EntityStore,
        GraphStore,
        GraphTraverser,
        KeywordSearcher,
        Reranker,
        Retriever,
        Store,
    )
    from .providers.cohere import CohereChat, CohereEmbedder, CohereReranker
    from .providers.hashing import HashingEmbedder
    from .providers.minilm import MiniLMEmbedder
    from .providers.openai import OpenAIChat, OpenAIEmbedder
    from .providers.select import select_chat, select_embedder
    from .providers.sentence_transformers import SentenceTransformerEmbedder
    from .providers.wordllama import WordLlamaEmbedder
    from .retrieval.answer import Answer, Citation, aanswer, answer
    from .retrieval.declaration import ModeOption, RetrievalMode, declare_mode, mode_option
    from .retrieval.entity import EntityGraphRetriever
    from .retrieval.format import format_knowledge
    from .retrieval.knowledge_tool import KnowledgeTool
    from .retrieval.local_search import LocalSearchRetriever
    from .retrieval.modes import MODES, build_retriever
    from .retrieval.ppr import PPRRetriever
    from .retrieval.registry import get_mode, mode_names, register_mode
    from .retrieval.rerank import LLMReranker, ScoreReranker
    from .retrieval.retrievers import GraphRetriever, HybridRetriever, VectorRetriever
    from .retrieval.triples import TripleGraphRetriever
    from .server import LocalServer
    from .settings import Neo4jSettings
    from .store import Neo4jStore
    from .triples.buffer import GraphBuffer
    from .triples.learning import ErrorResolutionRecorder
    from .types import (
        Chunk,
        ChunkEdge,
        ChunkFilter,
        ComponentScores,
        Document,
        EdgeContext,
        IngestResult,
        RelationType,
        RetrievalResult,
        by_document,
        by_meta,
        by_source,
        created_after,
        created_before,
    )
    from .types.triples import Triple

__all__ = [  # the public surface: the names of _EXPORTS (tests/test_public_api.py holds them equal)
    "ModeOption",
    "RetrievalMode",
    "declare_mode",
    "get_mode",
    "mode_names",
    "mode_option",
    "register_mode",
    "Answer",
    "AuthenticationFailed",
    "Cancelled",
    "ChatProvider",
    "Chunk",
    "ChunkEdge",
    "ChunkFilter",
    "Citation",
    "CohereChat",
    "CohereEmbedder",
    "CohereReranker",
    "CommunityStore",
    "ComponentScores",
    "ConfigurationError",
    "ConnectionFailed",
    "DimensionMismatchError",
    "Document",
    "DocumentChunkLister",
    "EdgeContext",
    "EmbeddingProvider",
    "EntityGraphRetriever",
    "EntityStore",
    "ErrorResolutionRecorder",
    "ExtractorRegistry",
    "FileResult",
    "GraphBuffer",
    "GraphOptions",
    "GraphRetriever",
    "GraphStore",
    "GraphTraverser",
    "HashingEmbedder",
    "HybridRetriever",
    "IngestGraphOptions",
    "IngestOptions",
    "IngestResult",
    "Ingestor",
    "InputError",
    "KeywordSearcher",
    "KgragError",
    "KnowledgeTool",
    "LLMEntityExtractor",
    "LLMReranker",
    "LocalSearchRetriever",
    "LocalServer",
    "MODES",
    "MarkdownChunker",
    "MiniLMEmbedder",
    "Neo4jSettings",
    "Neo4jStore",
    "NotFoundError",
    "OfflineEntityExtractor",
    "OpenAIChat",
    "OpenAIEmbedder",
    "PPRRetriever",
    "ProviderError",
    "RecursiveChunker",
    "RelationType",
    "Reranker",
    "RetrievalResult",
    "Retriever",
    "ScoreReranker",
    "SemanticChunker",
    "SentenceTransformerEmbedder",
    "Store",
    "StoreError",
    "Triple",
    "TripleGraphRetriever",
    "VectorRetriever",
    "WordLlamaEmbedder",
    "aanswer",
    "answer",
    "build_retriever",
    "by_document",
    "by_meta",
    "by_source",
    "created_after",
    "created_before",
    "format_knowledge",
    "select_chat",
    "select_embedder",
    "__version__",
]


__version__: str  # set by __getattr__ on first use


def _version() -> str:
    # looked up on first use: importlib.metadata imports email and zipfile, a cost every import would pay
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("kgrag-neo4j")
    except PackageNotFoundError:  # a source checkout that was never installed
        return "0.0.0"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        value = globals()[name] = _version()
        return value
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kgrag_neo4j' has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
