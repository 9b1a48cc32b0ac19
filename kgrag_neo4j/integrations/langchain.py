"""kgrag as a LangChain retriever (extra ``langchain``)::

    from kgrag_neo4j.integrations.langchain import KgragRetriever

    retriever = KgragRetriever.from_mode("graph", store, embedder, top_k=5, max_hops=2)
    # or over any kgrag retriever: KgragRetriever(retriever=GraphRetriever(store, embedder), top_k=5)
    docs = retriever.invoke("how are indexes created?")      # or: await retriever.ainvoke(...)

Each ``Document`` has the chunk text as ``page_content``, the chunk id as ``id``, and in
``metadata`` the ids, source, title, ``score``, component ``scores`` and ``graph_context``
(how a graph-found chunk was reached). It plugs into any chain: ``retriever | format_docs``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

try:
    from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
except ImportError as exc:  # pragma: no cover - the extra is missing
    from ..errors import ConfigurationError

    raise ConfigurationError('the LangChain adapter needs langchain-core: pip install "kgrag-neo4j[langchain]"') from exc
from pydantic import ConfigDict, model_validator

from ..protocols import EmbeddingProvider, Store
from ..types import ChunkFilter, RetrievalResult
from . import aretrieve, check_retriever, result_metadata

__all__ = ["KgragRetriever", "to_document"]


def to_document(result: RetrievalResult) -> Document:
    return Document(id=result.id, page_content=result.content, metadata=result_metadata(result))


class KgragRetriever(BaseRetriever):
    """A LangChain ``BaseRetriever`` over any kgrag retriever; ``top_k`` results per query
    (a call may pass ``top_k=`` to change it once)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    retriever: Any
    top_k: int = 5

    @model_validator(mode="after")
    def _check(self) -> KgragRetriever:
        check_retriever(self.retriever, self.top_k)
        return self

    @classmethod
    def from_mode(
        cls,
        mode: str,
        store: Store,
        embedder: EmbeddingProvider,
        *,
        top_k: int = 5,
        filters: Sequence[ChunkFilter] = (),
        **options: Any,
    ) -> KgragRetriever:
        """The retriever of a search mode (``vector``, ``hybrid``, ``graph``, ``ppr``, ``entity``,
        ``local``) with ``options`` as ``kgrag search --mode`` builds it (``build_retriever``:
        an option the mode cannot honour is refused)."""
        from ..retrieval.modes import build_retriever

        return cls(retriever=build_retriever(mode, store, embedder, filters=filters, **options), top_k=top_k)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, top_k: int | None = None
    ) -> list[Document]:
        return [to_document(r) for r in self.retriever.retrieve(query, top_k or self.top_k)]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, top_k: int | None = None
    ) -> list[Document]:
        return [to_document(r) for r in await aretrieve(self.retriever, query, top_k or self.top_k)]
