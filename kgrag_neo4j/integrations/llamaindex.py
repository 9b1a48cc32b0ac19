"""kgrag as a LlamaIndex retriever (extra ``llamaindex``: ``llama-index-core`` only)::

    from kgrag_neo4j.integrations.llamaindex import KgragRetriever

    retriever = KgragRetriever.from_mode("graph", store, embedder, top_k=5, max_hops=2)
    # or over any kgrag retriever: KgragRetriever(retriever=GraphRetriever(store, embedder), top_k=5)
    nodes = retriever.retrieve("how are indexes created?")   # or: await retriever.aretrieve(...)
    engine = RetrieverQueryEngine.from_args(retriever, llm=...)   # any query engine takes it

Each ``NodeWithScore`` holds a ``TextNode`` whose ``id_`` is the chunk id, whose ``SOURCE``
relationship is the document, and whose metadata carries the ids, source, title, component
``scores`` and ``graph_context``; only source and title are shown to the LLM and embedders.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

try:
    from llama_index.core.callbacks import CallbackManager
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeRelationship, NodeWithScore, QueryBundle, RelatedNodeInfo, TextNode
except ImportError as exc:  # pragma: no cover - the extra is missing
    from ..errors import ConfigurationError

    raise ConfigurationError('the LlamaIndex adapter needs llama-index-core: pip install "kgrag-neo4j[llamaindex]"') from exc

from ..protocols import EmbeddingProvider, Store
from ..types import ChunkFilter, RetrievalResult
from . import aretrieve, check_retriever, result_metadata

__all__ = ["KgragRetriever", "to_node"]

#: what an LLM prompt or an embedder sees of the metadata: the rest is for code
_SHOWN = ("source", "title")


def to_node(result: RetrievalResult) -> NodeWithScore:
    metadata = result_metadata(result)
    hidden = [k for k in metadata if k not in _SHOWN]
    node = TextNode(
        id_=result.id,
        text=result.content,
        metadata=metadata,
        excluded_embed_metadata_keys=hidden,
        excluded_llm_metadata_keys=hidden,
    )
    if result.document_id:
        node.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id=result.document_id)
    if result.parent_id:
        node.relationships[NodeRelationship.PARENT] = RelatedNodeInfo(node_id=result.parent_id)
    return NodeWithScore(node=node, score=result.score)


class KgragRetriever(BaseRetriever):
    """A LlamaIndex ``BaseRetriever`` over any kgrag retriever; ``top_k`` results per query."""

    def __init__(
        self,
        *,
        retriever: Any,
        top_k: int = 5,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
    ) -> None:
        check_retriever(retriever, top_k)
        self.retriever = retriever
        self.top_k = top_k
        super().__init__(callback_manager=callback_manager, verbose=verbose)

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

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return [to_node(r) for r in self.retriever.retrieve(query_bundle.query_str, self.top_k)]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return [to_node(r) for r in await aretrieve(self.retriever, query_bundle.query_str, self.top_k)]
