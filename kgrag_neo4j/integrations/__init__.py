"""Adapters to where RAG applications already are.

| module | peer | needs |
|---|---|---|
| ``integrations.langchain`` | ``KgragRetriever``, a LangChain ``BaseRetriever`` | extra ``langchain`` |
| ``integrations.llamaindex`` | ``KgragRetriever``, a LlamaIndex ``BaseRetriever`` | extra ``llamaindex`` |
| ``integrations.mcp`` | the MCP server behind ``kgrag mcp`` | extra ``mcp`` |

Each wraps any kgrag retriever (anything with ``retrieve(query, top_k)``; ``aretrieve`` is
used for the async calls when it has one). Importing this package imports none of the peers.
"""

from __future__ import annotations

from typing import Any

from ..types import RetrievalResult
from ..validation import check_int

__all__ = ["result_metadata"]


def result_metadata(result: RetrievalResult) -> dict[str, Any]:
    """What the adapters put in a Document's / node's metadata: the chunk's own metadata,
    then kgrag's fields (which win on a clash): ids, source, scores, graph context."""
    return {
        **dict(result.metadata),
        "id": result.id,
        "chunk_id": result.id,
        "document_id": result.document_id,
        "source": result.source,
        "title": result.title,
        "chunk_index": result.chunk_index,
        "score": result.score,
        "scores": result.scores.as_dict(),
        "graph_context": result.to_json()["graph_context"],
        "explanation": list(result.explanation),
    }


def check_retriever(retriever: Any, top_k: Any) -> None:
    from ..errors import ConfigurationError

    if not callable(getattr(retriever, "retrieve", None)):
        raise ConfigurationError(
            f"retriever must be a kgrag retriever (with retrieve(query, top_k)); got {type(retriever).__name__}"
        )
    check_int(top_k, "top_k", minimum=1)


async def aretrieve(retriever: Any, query: str, top_k: int) -> list[RetrievalResult]:
    from ..retrieval.answer import retrieve_async

    return await retrieve_async(retriever, query, top_k)
