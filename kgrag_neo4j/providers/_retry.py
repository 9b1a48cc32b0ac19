"""The retry loop and error mapping every network provider shares (Cohere, OpenAI-compatible).

One policy for all of them, with the SDKs' own retries turned off so ours are the only ones:
exponential backoff with jitter on 429, 5xx, timeouts and failed connections (a
``Retry-After`` header is honoured up to ``MAX_RETRY_AFTER``; a server asking for longer
gets no retry: the error says how long it asked for); no retry on any other 4xx. A call
gives up once it has spent ``BUDGET_TIMEOUTS`` times its timeout, waits included, so a
silent server costs about twice the timeout, not once per retry. Each vendor only says how
to read its SDK's exceptions (``_classify``); everything leaves as a ``kgrag_neo4j.errors``
class, and the API key never appears in a message or a cause, whole, cut short, in another
case or URL-encoded.

Why not tenacity: it would run the loop but not the part that is ours (which failures are
retryable, ``Retry-After``, the error mapping, the scrubbing), and its loop costs 5-40x this one
per call (``python -m bench libraries``); the loop is twenty lines.
"""

from __future__ import annotations

import logging
import math
import random
import time
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ProviderError, ProviderResponseError, ProviderTimeout, RateLimitError
from ..validation import check_int, check_number, check_text

__all__ = ["Failure", "RetryingProvider", "Secret", "backoff_delay", "body_detail", "retry_after_seconds"]

logger = logging.getLogger("kgrag_neo4j.providers")

#: the longest ``Retry-After`` waited for, in seconds
MAX_RETRY_AFTER = 30.0
#: a call's whole time (attempts and waits) is at most this many times its timeout
BUDGET_TIMEOUTS = 2.0
#: a run of this many characters of the API key (any case, plain or URL-encoded) is masked
KEY_RUN = 6


def backoff_delay(attempt: int, *, jitter: float, base: float = 0.5, cap: float = 20.0) -> float:
    """Seconds to wait before retry ``attempt`` (0-based): ``min(cap, base * 2**attempt)``,
    of which the upper half is scaled by ``jitter`` in [0, 1) so clients do not retry in step."""
    ceiling = min(cap, base * (2.0**attempt))
    return ceiling / 2 + ceiling / 2 * jitter


@dataclass(frozen=True)
class Failure:
    kind: str  # rate_limit, server, timeout, connect, bad_body, client
    status: int | None = None
    detail: str = ""
    retry_after: float | None = None

    @property
    def retryable(self) -> bool:
        return self.kind in ("rate_limit", "server", "timeout", "connect")


def body_detail(body: Any) -> str:
    """The readable part of an error body, on one line, at most 300 characters."""
    if isinstance(body, Mapping) and isinstance(body.get("message"), str):
        text = body["message"]
    elif isinstance(body, Mapping) and isinstance(body.get("error"), Mapping):
        return body_detail(body["error"])  # OpenAI's {"error": {"message": ...}}
    else:
        text = "" if body is None else str(body)
    text = " ".join(text.split())
    return text if len(text) <= 300 else text[:297] + "..."


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    for key, value in (headers or {}).items():
        if key.lower() == "retry-after":
            try:
                seconds = float(value)
            except ValueError:
                return None  # an HTTP date: rare from these APIs; our backoff applies
            return seconds if math.isfinite(seconds) and seconds >= 0 else None
    return None


def _fold(text: str) -> str:
    """``text`` in lower case, one character for one (so positions stay those of ``text``)."""
    return "".join(ch.lower()[:1] or ch for ch in text)


class Secret:
    """Holds the API key so that no repr, vars() dump or log line can print it."""

    __slots__ = ("value", "_runs")

    def __init__(self, value: str) -> None:
        self.value = value
        # every run of KEY_RUN characters of the key as a server might echo it: as it is,
        # URL-encoded, in any case (an echo cut short still holds runs of the key)
        forms = {value, urllib.parse.quote(value, safe=""), urllib.parse.quote_plus(value)}
        size = min(KEY_RUN, len(value))
        self._runs = {_fold(f[i : i + size]) for f in forms for i in range(len(f) - size + 1)} if size else set()

    def __repr__(self) -> str:
        return "<secret>"

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where runs of the key are in ``text``, merged: (start, end) pairs."""
        size = min(KEY_RUN, len(self.value))
        if not size or len(text) < size:
            return []
        folded = _fold(text)
        out: list[tuple[int, int]] = []
        for i in range(len(text) - size + 1):
            if folded[i : i + size] in self._runs:
                if out and i <= out[-1][1]:
                    out[-1] = (out[-1][0], i + size)
                else:
                    out.append((i, i + size))
        return out

    def mask(self, text: str) -> str:
        for start, end in reversed(self.spans(text)):
            text = text[:start] + "<secret>" + text[end:]
        return text


class RetryingProvider:
    """Validation of the common options, the retry loop, and the error messages.

    Subclasses set ``vendor`` (``"Cohere"``), ``api_name`` (what could not be reached),
    ``key_hint`` (which variable to check on a 401) and implement ``_classify``.
    """

    vendor = "provider"
    api_name = "the provider's API"
    key_hint = "check the API key"
    _secret: Secret | None = None
    #: keyword arguments added to every SDK call (Cohere: per-request options)
    _call_options: Mapping[str, Any] = {}

    def _init_common(self, model: str, *, timeout: float, max_retries: int, sleep: Callable[[float], None]) -> None:
        check_text(model, "model")
        check_number(timeout, "timeout (seconds)", above=0)
        check_int(max_retries, "max_retries", minimum=0)
        self.model = model
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self._sleep = sleep

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.model!r})"

    def _classify(self, exc: BaseException) -> Failure | None:
        """What went wrong, or None for an exception that is not a provider failure (a bug)."""
        raise NotImplementedError

    def _leaks(self, exc: BaseException) -> bool:
        return self._secret is not None and bool(self._secret.spans(f"{exc} {exc!r}"))

    def _scrub(self, text: str) -> str:
        return self._secret.mask(text) if self._secret is not None else text

    def _call(self, operation: str, fn: Callable[..., Any], **kwargs: Any) -> Any:
        attempts = self.max_retries + 1
        budget = BUDGET_TIMEOUTS * self.timeout
        spent = 0.0  # attempts and waits (the waits counted as asked: ``sleep`` may be a test's)
        for attempt in range(attempts):
            started = time.monotonic()
            try:
                response = fn(**kwargs, **self._call_options)
            except Exception as exc:
                spent += time.monotonic() - started
                failure = self._classify(exc)
                if failure is None:
                    raise
                cause = None if self._leaks(exc) else exc
                if failure.retry_after is not None and failure.retry_after > MAX_RETRY_AFTER:
                    raise self._error(operation, failure, attempt + 1, asked=failure.retry_after) from cause
                delay = backoff_delay(attempt, jitter=random.random())
                if failure.retry_after is not None:
                    delay = max(delay, failure.retry_after)
                if failure.retryable and attempt + 1 < attempts and spent + delay < budget:
                    spent += delay
                    logger.warning(
                        "%s %s %s: %s; retry %d of %d in %.2f s",
                        self.vendor, operation, self.model, self._scrub(str(failure.status or failure.detail)),
                        attempt + 1, self.max_retries, delay,
                    )  # fmt: skip
                    self._sleep(delay)
                    continue
                # A cause whose text carries the key (an error body echoing it) is dropped:
                # tracebacks print the whole chain.
                raise self._error(operation, failure, attempt + 1) from cause
            logger.debug("%s %s %s answered in %.3f s", self.vendor, operation, self.model, time.monotonic() - started)
            return response
        raise AssertionError("unreachable")  # pragma: no cover

    def _error(self, operation: str, failure: Failure, attempts: int, *, asked: float | None = None) -> ProviderError:
        what = f"{self.vendor} {operation} ({self.model})"
        tried = f"after {attempts} attempt{'s' if attempts != 1 else ''}"
        detail = f": {failure.detail}" if failure.detail else ""
        if asked is not None:
            status = f"HTTP {failure.status}" if failure.status else "the server"
            error: ProviderError = RateLimitError(
                f"{what}: {status} asks to wait {asked:g} s before trying again, longer than kgrag waits "
                f"({MAX_RETRY_AFTER:g} s); try again later{detail}"
            )
            error.args = (self._scrub(str(error.args[0])),)
            return error
        if failure.kind == "rate_limit":
            error = RateLimitError(f"{what} still rate limited (HTTP 429) {tried}{detail}")
        elif failure.kind == "timeout":
            error = ProviderTimeout(f"{what} timed out (limit {self.timeout:g} s) {tried}")
        elif failure.kind == "bad_body":
            error = ProviderResponseError(f"{what} answered with a body that is not the expected JSON{detail}")
        elif failure.kind == "server":
            error = ProviderError(f"{what} failed with HTTP {failure.status} {tried}{detail}")
            error.retryable = True
        elif failure.kind == "connect":
            error = ProviderError(f"{what} could not reach {self.api_name} {tried}{detail}")
            error.retryable = True
        elif failure.status in (401, 498):
            error = ProviderError(f"{what} rejected the API key (HTTP {failure.status}); {self.key_hint}{detail}")
        else:
            error = ProviderError(f"{what} rejected the request with HTTP {failure.status}{detail}")
        error.args = (self._scrub(str(error.args[0])),)
        return error

    def _bad(self, operation: str, what: str) -> ProviderResponseError:
        return ProviderResponseError(self._scrub(f"{self.vendor} {operation} ({self.model}) answered with {what}"))


def check_messages(messages: Any, roles: tuple[str, ...] = ("system", "user", "assistant")) -> list[dict[str, str]]:
    """Chat messages as plain ``{"role", "content"}`` dicts; ``InputError`` names the first bad one."""
    from ..errors import InputError

    wire = []
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise InputError(f"message {i} must be a mapping with 'role' and 'content'")
        role, content = message.get("role"), message.get("content")
        if role not in roles:
            raise InputError(f"message {i} has role {role!r}; expected one of {', '.join(roles)}")
        if not isinstance(content, str):
            raise InputError(f"message {i} content must be a string")
        wire.append({"role": role, "content": content})
    if not wire:
        raise InputError("chat needs at least one message")
    return wire
