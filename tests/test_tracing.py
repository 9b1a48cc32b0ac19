"""Spans of ingestion and retrieval: a real OpenTelemetry SDK (in-memory exporter) and the
callable form, on the real server."""

from __future__ import annotations

import pytest

from kgrag_neo4j.errors import ConfigurationError, InputError
from kgrag_neo4j.ingestion.ingestor import Ingestor
from kgrag_neo4j.retrieval.retrievers import GraphRetriever, HybridRetriever, VectorRetriever
from kgrag_neo4j.tracing import check_tracer, span

otel_sdk = pytest.importorskip("opentelemetry.sdk.trace")
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from opentelemetry.trace import StatusCode  # noqa: E402


@pytest.fixture
def otel():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider.get_tracer("kgrag-test"), exporter
    provider.shutdown()


def test_span_with_a_callable_reports_start_end_duration_and_error():
    events = []
    with span(lambda e, a: events.append((e, a)), "work", {"a": 1, "skip": None}) as sp:
        sp.set("b", "two")
    assert [e for e, _ in events] == ["work.start", "work.end"]
    assert events[0][1] == {"a": 1}
    assert events[1][1]["b"] == "two" and events[1][1]["duration_ms"] >= 0
    events.clear()
    with pytest.raises(RuntimeError):
        with span(lambda e, a: events.append((e, a)), "work"):
            raise RuntimeError("boom")
    assert events[-1][1]["error"] == "RuntimeError: boom"


def test_span_with_opentelemetry_records_attributes_and_exceptions(otel):
    tracer, exporter = otel
    with span(tracer, "work", {"n": 3, "ids": ("a", "b"), "obj": object()}) as sp:
        sp.set("result_count", 2)
    with pytest.raises(ValueError):
        with span(tracer, "failing"):
            raise ValueError("bad")
    ok, failed = exporter.get_finished_spans()
    assert ok.name == "work" and ok.attributes["n"] == 3 and ok.attributes["result_count"] == 2
    assert tuple(ok.attributes["ids"]) == ("a", "b") and isinstance(ok.attributes["obj"], str)
    assert failed.status.status_code is StatusCode.ERROR
    assert [e.name for e in failed.events] == ["exception"]


def test_no_tracer_means_opentelemetry_when_installed_and_false_means_none():
    events = []
    with span(False, "quiet") as sp:
        sp.set("x", 1)
    assert sp.attributes == {"x": 1} and events == []
    from kgrag_neo4j.tracing import _otel_default

    assert hasattr(_otel_default(), "start_as_current_span")


def test_a_tracer_of_another_kind_is_refused():
    with pytest.raises(ConfigurationError, match="tracer"):
        check_tracer("log please")


def test_retrievers_emit_retriever_retrieve_spans(store, hashing_embedder, otel):
    tracer, exporter = otel
    Ingestor(store, hashing_embedder, tracer=tracer).ingest_text(
        "Graph retrieval follows edges between chunks.\n\nVector search finds nearest chunks.", "t.txt"
    )
    for cls in (VectorRetriever, HybridRetriever, GraphRetriever):
        results = cls(store, hashing_embedder, tracer=tracer).retrieve("graph edges", 2)
        assert results
    spans = exporter.get_finished_spans()
    assert [s.name for s in spans] == ["ingest.document"] + ["retriever.retrieve"] * 3
    ingest = spans[0].attributes
    assert ingest["source"] == "t.txt" and ingest["status"] == "new" and ingest["chunk_count"] >= 1
    kinds = [s.attributes["retriever.type"] for s in spans[1:]]
    assert kinds == ["vector", "hybrid", "graph"]
    assert all(s.attributes["top_k"] == 2 and s.attributes["result_count"] >= 1 for s in spans[1:])
    assert spans[3].attributes["native"] is True and spans[3].attributes["max_hops"] == 2
    with pytest.raises(InputError):
        GraphRetriever(store, hashing_embedder, tracer=tracer).retrieve("", 2)
    # input is checked before the span opens: a refused query makes no span
    assert len(exporter.get_finished_spans()) == 4
