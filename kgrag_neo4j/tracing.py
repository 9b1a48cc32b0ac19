"""Spans around ingestion and retrieval (``ingest.document``, ``retriever.retrieve``).

A ``tracer`` option takes one of:

- an OpenTelemetry tracer (anything with ``start_as_current_span``, e.g.
  ``opentelemetry.trace.get_tracer("my-app")``): each operation is a real span, with its
  attributes, its duration, and an exception recorded on it (status ERROR) when it fails;
- a callable ``tracer(event, attributes)``: called with ``"<span>.start"`` before the work
  and ``"<span>.end"`` after it, the end attributes adding ``duration_ms`` and, on failure,
  ``error``. Logging or metrics need nothing more;
- ``None`` (the default): OpenTelemetry's global tracer when ``opentelemetry-api`` is
  installed (it records nothing until the application configures an SDK), otherwise no
  tracing;
- ``False``: no tracing.

The OpenTelemetry API is optional: nothing here imports it unless it is installed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from .errors import ConfigurationError

__all__ = ["SpanRecorder", "Tracer", "TracerOption", "check_tracer", "span"]

#: the callable form of a tracer
Tracer = Callable[[str, Mapping[str, Any]], None]
#: what a ``tracer=`` option accepts (see the module docstring)
TracerOption = Tracer | Any | None | bool

INSTRUMENTATION_NAME = "kgrag_neo4j"


def _otel_default() -> Any:
    try:
        from opentelemetry import trace
    except ImportError:
        return None
    return trace.get_tracer(INSTRUMENTATION_NAME)


def check_tracer(tracer: TracerOption) -> TracerOption:
    """``tracer`` if it is one of the accepted forms, else :class:`ConfigurationError`."""
    if tracer is None or tracer is False or hasattr(tracer, "start_as_current_span") or callable(tracer):
        return tracer
    raise ConfigurationError(
        "tracer must be an OpenTelemetry tracer, a callable tracer(event, attributes), None or False; "
        f"got {type(tracer).__name__}"
    )


def _otel_value(value: Any) -> Any:
    if isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(v, (str, bool, int, float)) for v in value):
        return list(value)
    return str(value)


class SpanRecorder:
    """What a traced operation can add while it runs: ``set(key, value)`` attributes."""

    __slots__ = ("attributes", "_otel")

    def __init__(self, attributes: Mapping[str, Any], otel_span: Any = None) -> None:
        self.attributes = dict(attributes)
        self._otel = otel_span

    def set(self, key: str, value: Any) -> None:
        if value is None:
            return
        self.attributes[key] = value
        if self._otel is not None:
            self._otel.set_attribute(key, _otel_value(value))

    def update(self, attributes: Mapping[str, Any]) -> None:
        for key, value in attributes.items():
            self.set(key, value)


@contextmanager
def span(tracer: TracerOption, name: str, attributes: Mapping[str, Any] | None = None) -> Iterator[SpanRecorder]:
    """Run the ``with`` body inside a span called ``name`` (module docstring for the forms)."""
    attrs = {k: v for k, v in (attributes or {}).items() if v is not None}
    if tracer is None:
        tracer = _otel_default()
    if tracer is None or isinstance(tracer, bool):  # False; True is refused by check_tracer
        yield SpanRecorder(attrs)
        return
    if hasattr(tracer, "start_as_current_span"):
        with tracer.start_as_current_span(
            name,
            attributes={k: _otel_value(v) for k, v in attrs.items()},
            record_exception=True,
            set_status_on_exception=True,
        ) as otel_span:
            yield SpanRecorder(attrs, otel_span)
        return
    recorder = SpanRecorder(attrs)
    tracer(f"{name}.start", dict(attrs))
    started = time.perf_counter()
    try:
        yield recorder
    except BaseException as exc:
        tracer(
            f"{name}.end",
            {
                **recorder.attributes,
                "duration_ms": (time.perf_counter() - started) * 1000.0,
                "error": f"{type(exc).__name__}: {exc}",
            },
        )
        raise
    tracer(f"{name}.end", {**recorder.attributes, "duration_ms": (time.perf_counter() - started) * 1000.0})
