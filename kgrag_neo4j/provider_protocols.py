"""The providers' ports: embedding, chat and reranking, as ``runtime_checkable`` protocols.

They live apart from :mod:`kgrag_neo4j.protocols` (which re-exports them) so that the option
bags (:mod:`kgrag_neo4j.options`, which hold a chat provider) and the store's ports (which take
the option bags) import this module instead of each other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from .types import RetrievalResult

__all__ = ["ChatProvider", "EmbeddingProvider", "InputType", "Reranker"]

InputType = Literal["document", "query"]


@runtime_checkable
class EmbeddingProvider(Protocol):
    """Turns texts into vectors of ``dimensions`` floats. ``input_type`` matters to asymmetric
    models (Cohere: ``search_document`` vs ``search_query``); symmetric ones ignore it."""

    name: str
    dimensions: int

    def embed(self, texts: Sequence[str], *, input_type: InputType = "document") -> list[list[float]]: ...


@runtime_checkable
class ChatProvider(Protocol):
    def chat(self, messages: Sequence[Mapping[str, str]], *, json_schema: Mapping[str, Any] | None = None) -> str:
        """The assistant's reply text (JSON text when ``json_schema`` is given)."""
        ...


@runtime_checkable
class Reranker(Protocol):
    def rerank(self, query: str, results: Sequence[RetrievalResult], top_k: int) -> list[RetrievalResult]: ...
