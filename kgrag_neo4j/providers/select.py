"""Which embedder, chat model or reranker to use when the user did not build one.

Embedder: explicit name, else Cohere when a key is set, else the offline WordLlama default.
Only an explicit or key-driven Cohere choice, or an explicit ``openai``, can reach the network.
Chat model: explicit name (``cohere`` or ``openai``), else Cohere when its key is set, else
OpenAI-compatible when ``OPENAI_API_KEY`` or ``OPENAI_BASE_URL`` is set, else an error that
says how to configure one. Reranker: by name (``none``, ``score``, ``cohere``); the Cohere one is
built here so that ``retrieval/`` imports no provider."""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..errors import NO_CHAT_MESSAGE, ConfigurationError
from ..protocols import ChatProvider, EmbeddingProvider, Reranker
from .cohere import MISSING_KEY_MESSAGE, CohereEmbedder, cohere_api_key
from .hashing import HashingEmbedder
from .minilm import MINILM_NAME, MiniLMEmbedder
from .sentence_transformers import SentenceTransformerEmbedder
from .wordllama import WordLlamaEmbedder

__all__ = [
    "CHAT_NAMES",
    "EMBEDDER_NAMES",
    "NO_CHAT_MESSAGE",
    "RERANKER_NAMES",
    "describe_chat",
    "describe_embedder",
    "embedder_for_model",
    "embedder_for_namespace",
    "select_chat",
    "select_embedder",
    "select_reranker",
]

EMBEDDER_NAMES = ("cohere", "hashing", "local", "minilm", "openai", "wordllama")
CHAT_NAMES = ("cohere", "openai")
RERANKER_NAMES = ("cohere", "none", "score")


def select_embedder(name: str | None = None, *, env: Mapping[str, str] = os.environ) -> EmbeddingProvider:
    """The embedder called ``name`` (one of ``EMBEDDER_NAMES``, case-insensitive), or, when
    ``name`` is None or empty: ``CohereEmbedder`` if ``CO_API_KEY``/``COHERE_API_KEY`` is set
    in ``env``, otherwise ``WordLlamaEmbedder``.

    A Cohere key with the ``cohere`` package missing is an error, not a silent fallback: the
    two embedders make vectors of different sizes and meanings.
    """
    choice = (name or "").strip().lower()
    key = cohere_api_key(env)
    if not choice:
        choice = "cohere" if key else "wordllama"
    if choice == "hashing":
        return HashingEmbedder()
    if choice == "wordllama":
        return WordLlamaEmbedder()
    if choice in ("minilm", "local"):
        # numpy, not sentence-transformers: the same vectors without torch (providers/minilm.py)
        return MiniLMEmbedder()
    if choice == "cohere":
        if key is None:
            raise ConfigurationError(MISSING_KEY_MESSAGE)
        return CohereEmbedder(api_key=key)
    if choice == "openai":
        from .openai import OpenAIEmbedder

        return OpenAIEmbedder(env=env)
    raise ConfigurationError(f"unknown embedder {name!r}; choose one of: {', '.join(EMBEDDER_NAMES)}")


def embedder_for_namespace(name: str | None, recorded: str | None, *, env: Mapping[str, str] = os.environ) -> EmbeddingProvider:
    """The embedder called ``name`` when one is named; otherwise the one a namespace records
    (``recorded``: its vectors are that model's, and stay so across a re-embed's switch);
    otherwise the default (``select_embedder``), for a namespace with nothing recorded."""
    if name:
        return select_embedder(name, env=env)
    if recorded and recorded != "unknown":
        return embedder_for_model(recorded, env=env)
    return select_embedder(None, env=env)


def embedder_for_model(model: str | None, *, env: Mapping[str, str] = os.environ) -> EmbeddingProvider:
    """The embedder whose ``name`` is ``model``, as a namespace records it (``hashing-256``,
    ``wordllama-l2_supercat-256``, ``cohere-embed-v4.0-1024``,
    ``sentence-transformers-all-MiniLM-L6-v2-384``): what makes query vectors comparable with
    the stored ones."""
    if not model or model == "unknown":
        raise ConfigurationError("no embedder is recorded for this namespace (nothing ingested yet?); name one with --embedder")
    base, _, size = model.rpartition("-")
    if not size.isdigit() or not base:
        raise ConfigurationError(f"recorded embedder {model!r} is not one kgrag makes; name one with --embedder")
    dimensions = int(size)
    embedder: EmbeddingProvider
    if base == "hashing":
        embedder = HashingEmbedder(dimensions=dimensions)
    elif base.startswith("wordllama-"):
        embedder = WordLlamaEmbedder(base[len("wordllama-") :], dim=dimensions)
    elif model == MINILM_NAME:
        embedder = MiniLMEmbedder()
    elif base.startswith("sentence-transformers-"):
        embedder = SentenceTransformerEmbedder(base[len("sentence-transformers-") :], dimensions=dimensions)
    elif base.startswith("cohere-"):
        key = cohere_api_key(env)
        if key is None:
            raise ConfigurationError(f"namespace embedded with {model!r}: {MISSING_KEY_MESSAGE}")
        embedder = CohereEmbedder(base[len("cohere-") :], api_key=key, dimensions=dimensions)
    elif base.startswith("openai-"):
        from .openai import OpenAIEmbedder

        embedder = OpenAIEmbedder(base[len("openai-") :], dimensions=dimensions, env=env)
    else:
        raise ConfigurationError(f"recorded embedder {model!r} is not one kgrag makes; name one with --embedder")
    if embedder.name != model:
        raise ConfigurationError(
            f"recorded embedder {model!r} cannot be rebuilt (got {embedder.name!r}); name one with --embedder"
        )
    return embedder


def describe_embedder(embedder: EmbeddingProvider) -> str:
    """One line for the CLI: which embedder, whether it is offline, its size."""
    description = getattr(embedder, "description", None)
    if isinstance(description, str) and description:
        return description
    return f"{embedder.name} ({type(embedder).__name__}; {embedder.dimensions} dims)"


def select_chat(name: str | None = None, *, env: Mapping[str, str] = os.environ) -> ChatProvider:
    """The chat model called ``name`` (``cohere`` or ``openai``), or, when ``name`` is None
    or empty, the one the environment configures (Cohere first). ``ConfigurationError`` with
    the variables to set when there is none."""
    from .openai import OpenAIChat, openai_configured

    choice = (name or "").strip().lower()
    if not choice:
        if cohere_api_key(env):
            choice = "cohere"
        elif openai_configured(env):
            choice = "openai"
        else:
            raise ConfigurationError(NO_CHAT_MESSAGE)
    if choice == "cohere":
        key = cohere_api_key(env)
        if key is None:
            raise ConfigurationError(MISSING_KEY_MESSAGE)
        from .cohere import CohereChat

        return CohereChat(api_key=key)
    if choice == "openai":
        return OpenAIChat(env=env)
    raise ConfigurationError(f"unknown chat model provider {name!r}; choose one of: {', '.join(CHAT_NAMES)}")


def describe_chat(chat: ChatProvider) -> str:
    """One line for the CLI: which chat model answers."""
    description = getattr(chat, "description", None)
    if isinstance(description, str) and description:
        return description
    return f"{getattr(chat, 'model', '?')} ({type(chat).__name__})"


def select_reranker(name: str, *, min_score: float = 0.0, env: Mapping[str, str] = os.environ) -> Reranker | None:
    """The reranker called ``name``: ``none`` (None), ``score`` (``ScoreReranker(min_score)``)
    or ``cohere`` (``CohereReranker``, which needs ``CO_API_KEY``)."""
    choice = (name or "").strip().lower()
    if choice == "none":
        return None
    if choice == "score":
        from ..retrieval.rerank import ScoreReranker

        return ScoreReranker(min_score)
    if choice == "cohere":
        from .cohere import CohereReranker

        return CohereReranker(api_key=cohere_api_key(env))
    raise ConfigurationError(f"unknown reranker {name!r}; choose one of: {', '.join(RERANKER_NAMES)}")
