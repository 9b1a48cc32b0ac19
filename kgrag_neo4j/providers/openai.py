"""OpenAI-compatible chat and embeddings through the official ``openai`` SDK (extra ``openai``).

One provider covers every server that speaks the OpenAI API: OpenAI itself, Azure OpenAI
(``base_url="https://RESOURCE.openai.azure.com/openai/v1/"``), Ollama
(``http://localhost:11434/v1``), vLLM and LM Studio (``http://localhost:1234/v1``). Settings
come from the arguments, else from the environment:

| variable | meaning | default |
|---|---|---|
| ``OPENAI_API_KEY`` | API key (a local server without auth needs none) | |
| ``OPENAI_BASE_URL`` | the server's ``/v1`` URL | OpenAI's |
| ``OPENAI_MODEL`` | chat model | ``gpt-4o-mini`` |
| ``OPENAI_EMBEDDING_MODEL`` | embedding model | ``text-embedding-3-small`` |
| ``OPENAI_EMBEDDING_DIMENSIONS`` | vector size (needed for models not listed below) | the model's |

Retries, timeouts and error mapping are the Cohere provider's (``providers._retry``): the
SDK's own retries are turned off. The SDK is imported when a provider is constructed, never
when this module is. The API key never appears in a repr or an error message.
"""

from __future__ import annotations

import json
import logging
import math
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from ..errors import ConfigurationError
from ..protocols import InputType
from ..validation import check_choice, check_int
from ._retry import Failure, RetryingProvider, Secret, body_detail, check_messages, retry_after_seconds
from ._texts import check_input_type, check_texts

__all__ = [
    "DEFAULT_CHAT_MODEL",
    "DEFAULT_EMBEDDING_MODEL",
    "OPENAI_EMBED_MODELS",
    "OpenAIChat",
    "OpenAIEmbedder",
    "openai_configured",
]

logger = logging.getLogger(__name__)

INSTALL_HINT = 'pip install "kgrag-neo4j[openai]"'
DEFAULT_CHAT_MODEL = "gpt-4o-mini"
DEFAULT_EMBEDDING_MODEL = "text-embedding-3-small"
MISSING_KEY_MESSAGE = (
    "no OpenAI API key: set OPENAI_API_KEY, or OPENAI_BASE_URL for a local OpenAI-compatible "
    "server (Ollama, vLLM, LM Studio) that needs none, or pass api_key= / base_url="
)
#: the key sent to a local server that checks none (the SDK insists on sending one)
NO_KEY = "not-needed"
MAX_EMBED_BATCH = 2048  # inputs per embeddings call that OpenAI accepts
#: model -> (default dimensions, whether ``dimensions`` may ask for fewer)
OPENAI_EMBED_MODELS: Mapping[str, tuple[int, bool]] = {
    "text-embedding-3-small": (1536, True),
    "text-embedding-3-large": (3072, True),
    "text-embedding-ada-002": (1536, False),
}
#: how structured output is asked for, from the best a server may support down to none
JSON_MODES = ("json_schema", "json_object", "none")


def openai_configured(env: Mapping[str, str] = os.environ) -> bool:
    """Whether the environment names an OpenAI-compatible server (a key or a base URL)."""
    return bool((env.get("OPENAI_API_KEY") or "").strip() or (env.get("OPENAI_BASE_URL") or "").strip())


def _env(env: Mapping[str, str], name: str) -> str | None:
    value = (env.get(name) or "").strip()
    return value or None


def _import_openai() -> Any:
    try:
        import openai
    except ImportError as exc:
        raise ConfigurationError(f"the OpenAI-compatible providers need the openai package: {INSTALL_HINT}") from exc
    return openai


def _classify(exc: BaseException) -> Failure | None:
    import openai

    if isinstance(exc, openai.APITimeoutError):  # before APIConnectionError: it is one
        return Failure("timeout", None, type(exc).__name__)
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc
        return Failure("connect", None, f"{type(cause).__name__}: {cause}")
    if isinstance(exc, openai.APIResponseValidationError):
        return Failure("bad_body", exc.status_code, body_detail(exc.body))
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        detail = body_detail(exc.body) or body_detail(exc.message)
        headers = getattr(exc.response, "headers", None)
        if status == 429:
            return Failure("rate_limit", status, detail, retry_after_seconds(headers))
        if status == 408:
            return Failure("timeout", status, detail)
        if status >= 500:
            return Failure("server", status, detail, retry_after_seconds(headers))
        return Failure("client", status, detail)
    if isinstance(exc, openai.APIError):  # an error event inside a stream
        return Failure("server", None, body_detail(exc.body) or str(exc))
    if isinstance(exc, json.JSONDecodeError):  # the SDK parses a 200's body (or an event) unchecked
        return Failure("bad_body", None, f"{exc.msg} at character {exc.pos}")
    return None


class _OpenAIProvider(RetryingProvider):
    """Client construction: ``client`` (an ``openai.OpenAI``) wins, else one is built from
    ``api_key``/``base_url`` (or the environment) on ``http_client`` when given."""

    vendor = "OpenAI"
    api_name = "the OpenAI-compatible server"
    key_hint = "check OPENAI_API_KEY"
    _classify = staticmethod(_classify)

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None,
        base_url: str | None,
        timeout: float,
        max_retries: int,
        client: Any,
        http_client: Any,
        sleep: Callable[[float], None],
        env: Mapping[str, str],
    ) -> None:
        self._init_common(model, timeout=timeout, max_retries=max_retries, sleep=sleep)
        openai = _import_openai()
        key = api_key if api_key is not None else _env(env, "OPENAI_API_KEY")
        self.base_url = base_url if base_url is not None else _env(env, "OPENAI_BASE_URL")
        self._secret = Secret(key) if key else None
        if client is None:
            if key is None and self.base_url is None:
                raise ConfigurationError(MISSING_KEY_MESSAGE)
            client = openai.OpenAI(
                api_key=key or NO_KEY,
                base_url=self.base_url,
                timeout=self.timeout,
                max_retries=0,
                http_client=http_client,
            )
        else:
            self.base_url = str(client.base_url)
            # the caller's client, with our timeout and only our retries
            client = client.with_options(timeout=self.timeout, max_retries=0)
        self._client = client
        if self.base_url is not None and "api.openai.com" not in self.base_url:
            self.vendor = "OpenAI-compatible"

    @property
    def where(self) -> str:
        return self.base_url or "api.openai.com"


class OpenAIEmbedder(_OpenAIProvider):
    """Embeddings from an OpenAI-compatible server. Symmetric: ``input_type`` is checked, and
    sent only as the optional ``query_prefix`` / ``document_prefix`` some open models want
    (nomic-embed-text: ``"search_query: "`` / ``"search_document: "``).

    ``dimensions`` defaults to the model's size (text-embedding-3-small 1536, -large 3072;
    both accept fewer, sent as ``dimensions``); any other model (Ollama's nomic-embed-text:
    768) needs ``dimensions`` or ``OPENAI_EMBEDDING_DIMENSIONS``, and every answer is checked
    against it. Texts are sent ``batch_size`` per call.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        dimensions: int | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        batch_size: int = 256,
        query_prefix: str = "",
        document_prefix: str = "",
        timeout: float = 30.0,
        max_retries: int = 4,
        client: Any = None,
        http_client: Any = None,
        sleep: Callable[[float], None] = time.sleep,
        env: Mapping[str, str] = os.environ,
    ) -> None:
        model = model or _env(env, "OPENAI_EMBEDDING_MODEL") or DEFAULT_EMBEDDING_MODEL
        if dimensions is None and _env(env, "OPENAI_EMBEDDING_DIMENSIONS"):
            text = _env(env, "OPENAI_EMBEDDING_DIMENSIONS") or ""
            if not text.isdigit():
                raise ConfigurationError(f"OPENAI_EMBEDDING_DIMENSIONS must be a positive integer; got {text!r}")
            dimensions = int(text)
        check_int(batch_size, "batch_size", minimum=1, maximum=MAX_EMBED_BATCH)
        self.dimensions, self._wire_dimensions = _resolve_dimensions(model, dimensions)
        super().__init__(
            model, api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries,
            client=client, http_client=http_client, sleep=sleep, env=env,
        )  # fmt: skip
        self.batch_size = batch_size
        self.query_prefix, self.document_prefix = query_prefix, document_prefix
        self.name = f"openai-{model}-{self.dimensions}"

    @property
    def description(self) -> str:
        return f"{self.name} ({self.vendor} API at {self.where}; {self.dimensions} dims)"

    def __repr__(self) -> str:
        return f"OpenAIEmbedder({self.model!r}, dimensions={self.dimensions})"

    def embed(self, texts: Sequence[str], *, input_type: InputType = "document") -> list[list[float]]:
        prefix = self.query_prefix if check_input_type(input_type) == "query" else self.document_prefix
        items = [prefix + t for t in check_texts(texts)]
        extra = {} if self._wire_dimensions is None else {"dimensions": self._wire_dimensions}
        vectors: list[list[float]] = []
        for start in range(0, len(items), self.batch_size):
            batch = items[start : start + self.batch_size]
            response = self._call(
                "embed", self._client.embeddings.create, model=self.model, input=batch, encoding_format="float", **extra
            )
            vectors.extend(self._float_vectors(response, len(batch)))
        return vectors

    def _float_vectors(self, response: Any, expected: int) -> list[list[float]]:
        rows = getattr(response, "data", None)
        if not isinstance(rows, list) or len(rows) != expected:
            got = len(rows) if isinstance(rows, list) else "no"
            raise self._bad("embed", f"{got} embeddings for {expected} texts")
        # ``index`` says which input a row belongs to; servers need not answer in order
        ordered = sorted(rows, key=lambda r: getattr(r, "index", 0) if isinstance(getattr(r, "index", 0), int) else 0)
        out = []
        for row in ordered:
            vector = getattr(row, "embedding", None)
            if not isinstance(vector, list) or len(vector) != self.dimensions or not all(map(_is_number, vector)):
                size = len(vector) if isinstance(vector, list) else type(vector).__name__
                raise self._bad("embed", f"an embedding of {size} values, expected {self.dimensions} numbers")
            out.append([float(x) for x in vector])
        return out


def _resolve_dimensions(model: str, dimensions: int | None) -> tuple[int, int | None]:
    """``(dimensions, dimensions to send or None)``: only text-embedding-3 models take the
    parameter; other servers may reject it, so it is never sent to them."""
    if dimensions is not None:
        check_int(dimensions, "dimensions", minimum=1)
    spec = OPENAI_EMBED_MODELS.get(model)
    if spec is None:
        if dimensions is None:
            raise ConfigurationError(
                f"embedding model {model!r} is not one kgrag knows the size of: pass dimensions= "
                "(or set OPENAI_EMBEDDING_DIMENSIONS), e.g. 768 for nomic-embed-text"
            )
        return dimensions, None
    default, shortenable = spec
    if dimensions is None or dimensions == default:
        return default, (default if shortenable else None)
    if not shortenable or dimensions > default:
        raise ConfigurationError(f"{model} returns {default} dimensions{' at most' if shortenable else ''}; got {dimensions}")
    return dimensions, dimensions


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


class OpenAIChat(_OpenAIProvider):
    """Chat completions from an OpenAI-compatible server, whole (``chat``) or streamed
    (``chat_stream``).

    With ``json_schema`` the reply is constrained by ``response_format``: ``json_schema``
    (OpenAI, vLLM, Ollama, LM Studio), else ``json_object``. A server that rejects the
    format (HTTP 400/422) is asked again with the next one down (``JSON_MODES``) and the
    working mode is remembered; ``json_mode`` sets where to start (``"none"``: the prompt
    alone asks for JSON).
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        json_mode: str = "json_schema",
        timeout: float = 60.0,
        max_retries: int = 4,
        client: Any = None,
        http_client: Any = None,
        sleep: Callable[[float], None] = time.sleep,
        env: Mapping[str, str] = os.environ,
    ) -> None:
        check_choice(json_mode, "json_mode", JSON_MODES)
        model = model or _env(env, "OPENAI_MODEL") or DEFAULT_CHAT_MODEL
        super().__init__(
            model, api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries,
            client=client, http_client=http_client, sleep=sleep, env=env,
        )  # fmt: skip
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.json_mode = json_mode

    @property
    def description(self) -> str:
        return f"{self.model} ({self.vendor} API at {self.where})"

    def _options(self) -> dict[str, Any]:
        options: dict[str, Any] = {}
        if self.temperature is not None:
            options["temperature"] = self.temperature
        if self.max_tokens is not None:
            # OpenAI's newer models take only the new name; other servers know the old one
            key = "max_tokens" if self.vendor == "OpenAI-compatible" else "max_completion_tokens"
            options[key] = self.max_tokens
        return options

    def chat(self, messages: Sequence[Mapping[str, str]], *, json_schema: Mapping[str, Any] | None = None) -> str:
        wire = check_messages(messages)
        while True:
            options = self._options()
            response_format = self._response_format(json_schema)
            if response_format is not None:
                options["response_format"] = response_format
            try:
                response = self._call("chat", self._client.chat.completions.create, model=self.model, messages=wire, **options)
            except Exception as exc:
                if response_format is not None and self._downgrade_json_mode(exc):
                    continue
                raise
            return self._text(response)

    def chat_stream(self, messages: Sequence[Mapping[str, str]]) -> Iterator[str]:
        """The reply as it is generated, piece by piece. Retries cover opening the stream;
        a failure after the first piece raises ``ProviderError`` (nothing is repeated)."""
        wire = check_messages(messages)
        stream = self._call(
            "chat", self._client.chat.completions.create, model=self.model, messages=wire, stream=True, **self._options()
        )
        pieces = 0
        try:
            for chunk in stream:
                for choice in getattr(chunk, "choices", None) or ():
                    piece = getattr(getattr(choice, "delta", None), "content", None)
                    if isinstance(piece, str) and piece:
                        pieces += 1
                        yield piece
        except Exception as exc:
            failure = self._classify(exc)
            if failure is None:
                raise
            raise self._error("chat stream", failure, 1) from (None if self._leaks(exc) else exc)
        finally:
            close = getattr(stream, "close", None)
            if callable(close):
                close()
        if not pieces:  # a body that is no event stream reads as one without events
            raise self._bad("chat stream", "no text (the body was not a stream of chat events)")

    def _response_format(self, json_schema: Mapping[str, Any] | None) -> dict[str, Any] | None:
        if json_schema is None or self.json_mode == "none":
            return None
        if self.json_mode == "json_schema" and json_schema:
            return {"type": "json_schema", "json_schema": {"name": "reply", "schema": dict(json_schema), "strict": False}}
        return {"type": "json_object"}

    def _downgrade_json_mode(self, exc: BaseException) -> bool:
        cause = exc.__cause__
        status = getattr(cause, "status_code", None)
        if status not in (400, 422) or self.json_mode == "none":
            return False
        before = self.json_mode
        self.json_mode = JSON_MODES[JSON_MODES.index(before) + 1]
        logger.warning(
            "%s at %s refused response_format %s (HTTP %s); asking with %s from now on",
            self.model, self.where, before, status, self.json_mode,
        )  # fmt: skip
        return True

    def _text(self, response: Any) -> str:
        choices = getattr(response, "choices", None)
        if not isinstance(choices, list) or not choices:
            raise self._bad("chat", "no choices")
        message = getattr(choices[0], "message", None)
        content = getattr(message, "content", None)
        if not isinstance(content, str) or not content:
            refusal = getattr(message, "refusal", None)
            reason = getattr(choices[0], "finish_reason", None)
            why = f"a refusal: {refusal}" if refusal else f"no text content (finish_reason={reason!r})"
            raise self._bad("chat", why)
        return content
