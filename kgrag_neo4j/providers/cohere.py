"""Cohere embeddings, chat and rerank through the official ``cohere`` SDK (extra ``cohere``).

The SDK is imported when a provider is constructed, never when this module is. Every call
goes through one retry loop (``_CohereProvider._call``) with the SDK's own retries turned off,
so the policy is ours alone: exponential backoff with jitter on 429, 5xx, timeouts and failed
connections; no retry on any other 4xx. SDK and transport errors leave as
``kgrag_neo4j.errors`` classes. The API key never appears in a repr or an error message.
"""

from __future__ import annotations

import logging
import math
import os
import random
import time
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping, Sequence

from ..errors import (
    ConfigurationError,
    InputError,
    ProviderError,
    ProviderResponseError,
    ProviderTimeout,
    RateLimitError,
)
from ..protocols import InputType
from ..types import RetrievalResult
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
MISSING_KEY_MESSAGE = (
    "no Cohere API key: set the CO_API_KEY environment variable (COHERE_API_KEY also works) or pass api_key="
)

MAX_EMBED_BATCH = 96  # Cohere's limit of texts per embed call
MAX_RERANK_DOCUMENTS = 1000  # documents per rerank call that Cohere recommends at most
_INPUT_TYPES = {"document": "search_document", "query": "search_query"}
_CHAT_ROLES = ("system", "user", "assistant")


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
    if dimensions is not None and (isinstance(dimensions, bool) or not isinstance(dimensions, int) or dimensions <= 0):
        raise ConfigurationError(f"dimensions must be a positive integer; got {dimensions!r}")
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


def backoff_delay(attempt: int, *, jitter: float, base: float = 0.5, cap: float = 20.0) -> float:
    """Seconds to wait before retry ``attempt`` (0-based): ``min(cap, base * 2**attempt)``,
    of which the upper half is scaled by ``jitter`` in [0, 1) so clients do not retry in step."""
    ceiling = min(cap, base * (2.0**attempt))
    return ceiling / 2 + ceiling / 2 * jitter


def _import_cohere() -> Any:
    try:
        import cohere
    except ImportError as exc:
        raise ConfigurationError(f"the Cohere providers need the cohere package: {INSTALL_HINT}") from exc
    return cohere


@dataclass(frozen=True)
class _Failure:
    kind: str  # rate_limit, server, timeout, connect, bad_body, client
    status: int | None = None
    detail: str = ""
    retry_after: float | None = None

    @property
    def retryable(self) -> bool:
        return self.kind in ("rate_limit", "server", "timeout", "connect")


def _body_detail(body: Any) -> str:
    if isinstance(body, Mapping) and isinstance(body.get("message"), str):
        text = body["message"]
    else:
        text = "" if body is None else str(body)
    text = " ".join(text.split())
    return text if len(text) <= 300 else text[:297] + "..."


def _retry_after(headers: Mapping[str, str] | None) -> float | None:
    for key, value in (headers or {}).items():
        if key.lower() == "retry-after":
            try:
                seconds = float(value)
            except ValueError:
                return None  # an HTTP date: rare from Cohere; our backoff applies
            return seconds if math.isfinite(seconds) and seconds >= 0 else None
    return None


def _classify(exc: BaseException) -> _Failure | None:
    """What went wrong, or None for an exception that is not a provider failure (a bug)."""
    import httpx
    from cohere.core.api_error import ApiError

    try:
        from cohere.core.parse_error import ParsingError
    except ImportError:  # older SDKs have no ParsingError
        ParsingError = ()  # type: ignore[assignment,misc]

    if isinstance(exc, ParsingError):
        return _Failure("bad_body", exc.status_code, _body_detail(exc.body))
    if isinstance(exc, ApiError):
        status = exc.status_code
        detail = _body_detail(exc.body)
        if status is None or 200 <= status < 300:
            # The SDK raises ApiError with the 2xx status when the body is not JSON.
            return _Failure("bad_body", status, detail)
        if status == 429:
            return _Failure("rate_limit", status, detail, _retry_after(exc.headers))
        if status == 408:
            return _Failure("timeout", status, detail)
        if status >= 500:
            return _Failure("server", status, detail, _retry_after(exc.headers))
        return _Failure("client", status, detail)
    if isinstance(exc, httpx.TimeoutException):
        return _Failure("timeout", None, type(exc).__name__)
    if isinstance(exc, httpx.TransportError):
        return _Failure("connect", None, f"{type(exc).__name__}: {exc}")
    return None


class _Secret:
    """Holds the API key so that no repr, vars() dump or log line can print it."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __repr__(self) -> str:
        return "<secret>"


class _CohereProvider:
    """The shared plumbing: client construction, the retry loop and error mapping."""

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
        if not isinstance(model, str) or not model.strip():
            raise ConfigurationError(f"model must be a non-empty string; got {model!r}")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            raise ConfigurationError(f"timeout must be a positive number of seconds; got {timeout!r}")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise ConfigurationError(f"max_retries must be an integer >= 0; got {max_retries!r}")
        cohere = _import_cohere()
        self.model = model
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self._sleep = sleep
        key = api_key if api_key is not None else cohere_api_key()
        self._secret = _Secret(key) if key else None
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
        self._request_options = {"max_retries": 0, "timeout": self.timeout, "timeout_in_seconds": self.timeout}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.model!r})"

    def _leaks(self, exc: BaseException) -> bool:
        return self._secret is not None and bool(self._secret.value) and self._secret.value in str(exc)

    def _scrub(self, text: str) -> str:
        if self._secret is not None and self._secret.value:
            text = text.replace(self._secret.value, "<secret>")
        return text

    def _call(self, operation: str, fn: Callable[..., Any], **kwargs: Any) -> Any:
        attempts = self.max_retries + 1
        for attempt in range(attempts):
            started = time.monotonic()
            try:
                response = fn(**kwargs, request_options=self._request_options)
            except Exception as exc:
                failure = _classify(exc)
                if failure is None:
                    raise
                if failure.retryable and attempt + 1 < attempts:
                    delay = backoff_delay(attempt, jitter=random.random())
                    if failure.retry_after is not None:
                        delay = max(delay, min(failure.retry_after, 60.0))
                    logger.warning(
                        "Cohere %s %s: %s; retry %d of %d in %.2f s",
                        operation, self.model, self._scrub(str(failure.status or failure.detail)),
                        attempt + 1, self.max_retries, delay,
                    )  # fmt: skip
                    self._sleep(delay)
                    continue
                # A cause whose text carries the key (an error body echoing it) is dropped:
                # tracebacks print the whole chain.
                raise self._error(operation, failure, attempt + 1) from (None if self._leaks(exc) else exc)
            logger.debug("Cohere %s %s answered in %.3f s", operation, self.model, time.monotonic() - started)
            return response
        raise AssertionError("unreachable")  # pragma: no cover

    def _error(self, operation: str, failure: _Failure, attempts: int) -> ProviderError:
        what = f"Cohere {operation} ({self.model})"
        tried = f"after {attempts} attempt{'s' if attempts != 1 else ''}"
        detail = f": {failure.detail}" if failure.detail else ""
        if failure.kind == "rate_limit":
            error: ProviderError = RateLimitError(f"{what} still rate limited (HTTP 429) {tried}{detail}")
        elif failure.kind == "timeout":
            error = ProviderTimeout(f"{what} timed out (limit {self.timeout:g} s) {tried}")
        elif failure.kind == "bad_body":
            error = ProviderResponseError(f"{what} answered with a body that is not the expected JSON{detail}")
        elif failure.kind == "server":
            error = ProviderError(f"{what} failed with HTTP {failure.status} {tried}{detail}")
            error.retryable = True
        elif failure.kind == "connect":
            error = ProviderError(f"{what} could not reach the Cohere API {tried}{detail}")
            error.retryable = True
        elif failure.status in (401, 498):
            error = ProviderError(f"{what} rejected the API key (HTTP {failure.status}); check CO_API_KEY{detail}")
        else:
            error = ProviderError(f"{what} rejected the request with HTTP {failure.status}{detail}")
        error.args = (self._scrub(str(error.args[0])),)
        return error

    def _bad(self, operation: str, what: str) -> ProviderResponseError:
        return ProviderResponseError(self._scrub(f"Cohere {operation} ({self.model}) answered with {what}"))


def _is_number(value: Any) -> bool:
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
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or not 1 <= batch_size <= MAX_EMBED_BATCH:
            raise ConfigurationError(f"batch_size must be an integer in 1..{MAX_EMBED_BATCH}; got {batch_size!r}")
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
        wire = _check_messages(messages)
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


def _check_messages(messages: Sequence[Mapping[str, str]]) -> list[dict[str, str]]:
    wire = []
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise InputError(f"message {i} must be a mapping with 'role' and 'content'")
        role, content = message.get("role"), message.get("content")
        if role not in _CHAT_ROLES:
            raise InputError(f"message {i} has role {role!r}; expected one of {', '.join(_CHAT_ROLES)}")
        if not isinstance(content, str):
            raise InputError(f"message {i} content must be a string")
        wire.append({"role": role, "content": content})
    if not wire:
        raise InputError("chat needs at least one message")
    return wire


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
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k <= 0:
            raise InputError(f"top_k must be a positive integer; got {top_k!r}")
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
