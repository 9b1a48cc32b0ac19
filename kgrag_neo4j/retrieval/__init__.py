"""Retrieval: turning a query into ranked, explained chunks.

Pure scoring lives in :mod:`kgrag_neo4j.retrieval.scoring`; retrievers only orchestrate store
and provider calls around it.
"""

from .rerank import LLMReranker, ScoreReranker  # light: no provider or SDK imports

__all__ = ["LLMReranker", "ScoreReranker"]
