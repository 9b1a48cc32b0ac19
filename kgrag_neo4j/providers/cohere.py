"""Cohere embeddings, chat and rerank through the official ``cohere`` SDK (extra ``cohere``).

The SDK is imported when a provider is constructed, never when this module is. Every call
goes through the shared retry loop (``providers._retry.RetryingProvider._call``) with the SDK's own retries turned off,
so the policy is ours alone: exponential backoff with jitter on 429, 5xx, timeouts and failed
connections; no retry on any other 4xx. SDK and transport errors leave as
``kgrag_neo4j.errors`` classes. The API key never appears in a repr or an error message.
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeGuard

from ..errors import ConfigurationError, InputError
from ..protocols import InputType
from ..types import RetrievalResult
from ..validation import check_int
from ._retry import Failure, RetryingProvider, Secret, backoff_delay, body_detail, check_messages, retry_after_seconds
from ._texts import check_input_type, check_texts

__all__ = [
    "API_KEY_VARIABLES",
    "COHERE_EMBED_MODELS",
    "CohereChat",
    "CohereEmbedder",
    "CohereReranker",
    "backoff_delay",
    "cohere_api_key",
    "resolve_embed_dimensions",
]

logger = logging.getLogger(__name__)

INSTALL_HINT = 'pip install "kgrag-neo4j[cohere]"'
API_KEY_VARIABLES = ("CO_API_KEY", "COHERE_API_KEY")
MISSING_KEY_MESSAGE = "no Cohere API key: set the CO_API_KEY environment variable (COHERE_API_KEY also works) or pass api_key="

MAX_EMBED_BATCH = 96  # Cohere's limit of texts per embed call
MAX_RERANK_DOCUMENTS = 1000  # documents per rerank call that Cohere recommends at most
_INPUT_TYPES = {"document": "search_document", "query": "search_query"}


@dataclass(frozen=True)
class _EmbedModel:
    default_dimensions: int
    output_dimensions: tuple[int, ...] = ()  # sizes ``output_dimension`` may ask for; () = fixed


COHERE_EMBED_MODELS: Mapping[str, _EmbedModel] = {
    "embed-v4.0": _EmbedModel(1024, (256, 512, 1024, 1536)),
    "embed-english-v3.0": _EmbedModel(1024),
    "embed-multilingual-v3.0": _EmbedModel(1024),
    "embed-english-light-v3.0": _EmbedModel(384),
    "embed-multilingual-light-v3.0": _EmbedModel(384),
}


def cohere_api_key(env: Mapping[str, str] = os.environ) -> str | None:
    """The first non-blank of ``CO_API_KEY``, ``COHERE_API_KEY`` in ``env``."""
    for name in API_KEY_VARIABLES:
        value = (env.get(name) or "").strip()
        if value:
            return value
    return None


def resolve_embed_dimensions(model: str, dimensions: int | None) -> tuple[int, int | None]:
    """``(dimensions, output_dimension to send or None)`` for an embed model.

    Known models get their default size when ``dimensions`` is None; embed-v4 models always
    send ``output_dimension`` so the size never depends on the server's default. An unknown
    model needs ``dimensions`` and is sent none (the response length is checked instead).
    """
    if dimensions is not None:
        check_int(dimensions, "dimensions", minimum=1)
    spec = COHERE_EMBED_MODELS.get(model)
    if spec is None and model.startswith("embed-v4"):
        spec = COHERE_EMBED_MODELS["embed-v4.0"]
    if spec is None:
        if dimensions is None:
            known = ", ".join(COHERE_EMBED_MODELS)
            raise ConfigurationError(f"unknown Cohere embed model {model!r}: pass dimensions= (known models: {known})")
        return dimensions, None
    if not spec.output_dimensions:
        if dimensions not in (None, spec.default_dimensions):
            raise ConfigurationError(
                f"Cohere {model} always returns {spec.default_dimensions} dimensions; got dimensions={dimensions}"
            )
        return spec.default_dimensions, None
    size = spec.default_dimensions if dimensions is None else dimensions
    if size not in spec.output_dimensions:
        allowed = ", ".join(map(str, spec.output_dimensions))
        raise ConfigurationError(f"Cohere {model} supports dimensions {allowed}; got {size}")
    return size, size


def _import_cohere() -> Any:
    try:
        import cohere
    except ImportError as exc:
        raise ConfigurationError(f"the Cohere providers need the cohere package: {INSTALL_HINT}") from exc
    return cohere


def _classify(exc: BaseException) -> Failure | None:
    """What went wrong, or None for an exception that is not a provider failure (a bug)."""
    import httpx
    from cohere.core.api_error import ApiError

    try:
        from cohere.core.parse_error import ParsingError
    except ImportError:  # older SDKs have no ParsingError
        ParsingError = ()  # type: ignore[assignment,misc]  # an empty tuple: the except clause then catches nothing

    if isinstance(exc, ParsingError):
        return Failure("bad_body", exc.status_code, body_detail(exc.body))
    if isinstance(exc, ApiError):
        status = exc.status_code
        detail = body_detail(exc.body)
        if status is None or 200 <= status < 300:
            # The SDK raises ApiError with the 2xx status when the body is not JSON.
            return Failure("bad_body", status, detail)
        if status == 429:
            return Failure("rate_limit", status, detail, retry_after_seconds(exc.headers))
        if status == 408:
            return Failure("timeout", status, detail)
        if status >= 500:
            return Failure("server", status, detail, retry_after_seconds(exc.headers))
        return Failure("client", status, detail)
    if isinstance(exc, httpx.TimeoutException):
        return Failure("timeout", None, type(exc).__name__)
    if isinstance(exc, httpx.TransportError):
        return Failure("connect", None, f"{type(exc).__name__}: {exc}")
    return None


class _CohereProvider(RetryingProvider):
    """Client construction for the Cohere providers; the retry loop is ``RetryingProvider``'s."""

    vendor = "Cohere"
    api_name = "the Cohere API"
    key_hint = "check CO_API_KEY"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None,
        timeout: float,
        max_retries: int,
        client: Any,
        sleep: Callable[[float], None],
    ) -> None:
        self._init_common(model, timeout=timeout, max_retries=max_retries, sleep=sleep)
        cohere = _import_cohere()
        key = api_key if api_key is not None else cohere_api_key()
        self._secret = Secret(key) if key else None
        if client is None:
            if self._secret is None:
                raise ConfigurationError(MISSING_KEY_MESSAGE)
            client = cohere.ClientV2(
                api_key=key,
                client_name="kgrag-neo4j",
                timeout=self.timeout,
                max_retries=0,
                log_warning_experimental_features=False,
            )
        self._client = client
        # Why per request: these then hold on a client the caller built too. The SDK's retries
        # are off (ours are the only ones); the timeout goes under both names because newer SDKs
        # read ``timeout`` and older ones only ``timeout_in_seconds``.
        self._call_options = {"request_options": {"max_retries": 0, "timeout": self.timeout, "timeout_in_seconds": self.timeout}}

    _classify = staticmethod(_classify)


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


class CohereEmbedder(_CohereProvider):
    """Cohere embeddings; asymmetric: ``input_type="document"`` is sent as ``search_document``
    and ``"query"`` as ``search_query``.

    ``dimensions`` defaults to the model's size (embed-v4.0: 1024 of 256/512/1024/1536, sent as
    ``output_dimension``; v3.0: 1024; light v3.0: 384). Texts are sent ``batch_size`` (at most
    96, Cohere's limit) per call. ``sleep`` is what waits between retries (tests pass a stub).
    """

    def __init__(
        self,
        model: str = "embed-v4.0",
        *,
        api_key: str | None = None,
        dimensions: int | None = None,
        batch_size: int = MAX_EMBED_BATCH,
        timeout: float = 30.0,
        max_retries: int = 4,
        client: Any = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        check_int(batch_size, "batch_size", minimum=1, maximum=MAX_EMBED_BATCH)
        self.dimensions, self._output_dimension = resolve_embed_dimensions(model, dimensions)
        super().__init__(model, api_key=api_key, timeout=timeout, max_retries=max_retries, client=client, sleep=sleep)
        self.batch_size = batch_size
        self.name = f"cohere-{model}-{self.dimensions}"

    @property
    def description(self) -> str:
        return f"{self.name} (Cohere API over the network; {self.dimensions} dims)"

    def __repr__(self) -> str:
        return f"CohereEmbedder({self.model!r}, dimensions={self.dimensions})"

    def embed(self, texts: Sequence[str], *, input_type: InputType = "document") -> list[list[float]]:
        cohere_type = _INPUT_TYPES[check_input_type(input_type)]
        items = check_texts(texts)
        extra = {} if self._output_dimension is None else {"output_dimension": self._output_dimension}
        vectors: list[list[float]] = []
        for start in range(0, len(items), self.batch_size):
            batch = items[start : start + self.batch_size]
            response = self._call(
                "embed",
                self._client.embed,
                model=self.model,
                texts=batch,
                input_type=cohere_type,
                embedding_types=["float"],
                **extra,
            )
            vectors.extend(self._float_vectors(response, len(batch)))
        return vectors

    def _float_vectors(self, response: Any, expected: int) -> list[list[float]]:
        rows = getattr(getattr(response, "embeddings", None), "float_", None)
        if not isinstance(rows, list) or len(rows) != expected:
            got = len(rows) if isinstance(rows, list) else "no"
            raise self._bad("embed", f"{got} float embeddings for {expected} texts")
        for row in rows:
            if not isinstance(row, list) or len(row) != self.dimensions or not all(map(_is_number, row)):
                size = len(row) if isinstance(row, list) else type(row).__name__
                raise self._bad("embed", f"an embedding of {size} values, expected {self.dimensions} numbers")
        return [[float(x) for x in row] for row in rows]


class CohereChat(_CohereProvider):
    """Cohere chat (API v2). With ``json_schema`` the reply is constrained to JSON
    (``response_format={"type": "json_object", "json_schema": ...}``)."""

    def __init__(
        self,
        model: str = "command-a-03-2025",
        *,
        api_key: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        timeout: float = 60.0,
        max_retries: int = 4,
        client: Any = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__(model, api_key=api_key, timeout=timeout, max_retries=max_retries, client=client, sleep=sleep)
        self.temperature = temperature
        self.max_tokens = max_tokens

    def chat(self, messages: Sequence[Mapping[str, str]], *, json_schema: Mapping[str, Any] | None = None) -> str:
        wire = check_messages(messages)
        options: dict[str, Any] = {}
        if json_schema is not None:
            response_format: dict[str, Any] = {"type": "json_object"}
            if json_schema:
                response_format["json_schema"] = dict(json_schema)
            options["response_format"] = response_format
        if self.temperature is not None:
            options["temperature"] = self.temperature
        if self.max_tokens is not None:
            options["max_tokens"] = self.max_tokens
        response = self._call("chat", self._client.chat, model=self.model, messages=wire, **options)
        message = getattr(response, "message", None)
        content = getattr(message, "content", None)
        texts = [
            item.text
            for item in (content if isinstance(content, list) else [])
            if getattr(item, "type", None) == "text" and isinstance(getattr(item, "text", None), str)
        ]
        if not texts:
            reason = getattr(response, "finish_reason", None)
            raise self._bad("chat", f"no text content (finish_reason={reason!r})")
        return "".join(texts)


class CohereReranker(_CohereProvider):
    """Cohere rerank: each result's ``score`` and ``scores.rerank`` become its relevance score
    (0..1); the top ``top_k`` are returned, most relevant first. Inputs are not modified."""

    def __init__(
        self,
        model: str = "rerank-v3.5",
        *,
        api_key: str | None = None,
        max_tokens_per_doc: int | None = None,
        timeout: float = 30.0,
        max_retries: int = 4,
        client: Any = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__(model, api_key=api_key, timeout=timeout, max_retries=max_retries, client=client, sleep=sleep)
        self.max_tokens_per_doc = max_tokens_per_doc

    def rerank(self, query: str, results: Sequence[RetrievalResult], top_k: int) -> list[RetrievalResult]:
        if not isinstance(query, str) or not query.strip():
            raise InputError("rerank needs a non-empty query")
        check_int(top_k, "top_k", minimum=1, error=InputError)
        items = list(results)
        extra = {} if self.max_tokens_per_doc is None else {"max_tokens_per_doc": self.max_tokens_per_doc}
        scored: list[tuple[float, int]] = []
        for start in range(0, len(items), MAX_RERANK_DOCUMENTS):
            batch = items[start : start + MAX_RERANK_DOCUMENTS]
            top_n = min(top_k, len(batch))
            response = self._call(
                "rerank",
                self._client.rerank,
                model=self.model,
                query=query,
                documents=[r.content for r in batch],
                top_n=top_n,
                **extra,
            )
            scored.extend((score, start + index) for index, score in self._pairs(response, len(batch), top_n))
        scored.sort(key=lambda pair: (-pair[0], pair[1]))
        note = f"rerank: Cohere {self.model}"
        return [_reranked(items[i], score, note) for score, i in scored[:top_k]]

    def _pairs(self, response: Any, documents: int, top_n: int) -> list[tuple[int, float]]:
        rows = getattr(response, "results", None)
        if not isinstance(rows, list) or len(rows) != top_n:
            got = len(rows) if isinstance(rows, list) else "no"
            raise self._bad("rerank", f"{got} results where {top_n} were asked")
        pairs, seen = [], set()
        for row in rows:
            index, score = getattr(row, "index", None), getattr(row, "relevance_score", None)
            if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < documents or index in seen:
                raise self._bad("rerank", f"result index {index!r} for {documents} documents")
            if not _is_number(score):
                raise self._bad("rerank", f"relevance_score {score!r}")
            seen.add(index)
            pairs.append((index, float(score)))
        return pairs


def _reranked(result: RetrievalResult, score: float, note: str) -> RetrievalResult:
    return replace(
        result,
        score=score,
        scores=replace(result.scores, rerank=score),
        explanation=[*result.explanation, f"{note} relevance {score:.3f}"],
    )
