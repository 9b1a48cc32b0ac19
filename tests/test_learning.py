"""Error-resolution tracking on the triple graph: patterns and similarity in tables, the
failure -> fix -> success flow and its confidence propagation on the real server."""

from __future__ import annotations

import pytest

from kgrag_neo4j.errors import ConfigurationError, InputError
from kgrag_neo4j.triples import GraphBuffer
from kgrag_neo4j.triples.learning import ErrorResolutionRecorder, error_pattern, node_name, similar_patterns


@pytest.mark.parametrize(
    "message, pattern",
    [
        ("Timeout after 30s to 10.0.0.1:443", "timeout after <n>s to <addr>"),
        ("Timeout after 45s to 10.0.0.2:8443", "timeout after <n>s to <addr>"),
        ("KeyError: 'user_id'", "keyerror: <str>"),
        ("cannot open /tmp/data/x.csv: permission denied", "cannot open <path>: permission denied"),
        ("GET https://api.example.com/v1/items failed with 503", "get <url> failed with <n>"),
        ("object 0x7f3a2b not found; request 9f8e7d6c5b4a", "object <id> not found; request <id>"),
        ("  Many   spaces\tand\nlines ", "many spaces and lines"),
    ],
)
def test_error_pattern_masks_what_varies(message, pattern):
    assert error_pattern(message) == pattern


def test_error_pattern_needs_text():
    with pytest.raises(InputError):
        error_pattern("  ")


@pytest.mark.parametrize(
    "pattern, known, threshold, expected",
    [
        (
            "http <n> from upstream service api",
            ["http <n> from upstream service payments", "disk full"],
            0.6,
            ["http <n> from upstream service payments"],
        ),
        ("http <n> from upstream service api", ["http <n> from upstream service payments"], 0.8, []),
        ("a b c d", ["a b c d", "a b c", "a b", "x y"], 0.5, ["a b c", "a b"]),  # itself is not similar
        ("a b c d", [], 0.5, []),
    ],
)
def test_similar_patterns_by_word_overlap(pattern, known, threshold, expected):
    assert similar_patterns(pattern, known, threshold=threshold) == expected


def test_node_names_get_a_kind_prefix_once():
    assert node_name("tool", "http_client") == "tool:http_client"
    assert node_name("tool", "tool:http_client") == "tool:http_client"
    assert node_name("session", " abc ") == "session:abc"


@pytest.mark.parametrize("use_buffer", [False, True])
def test_failure_fix_success_propagates_confidence(store, use_buffer):
    buffer = GraphBuffer(store.add_triples, flush_interval=60.0) if use_buffer else None
    recorder = ErrorResolutionRecorder(store, buffer=buffer)
    first = recorder.record_failure("payments_client", "HTTP 503 from upstream service payments", session="s1")
    assert first.error == "error:http <n> from upstream service payments" and first.similar == ()
    recorder.record_fix(first.error, "retry with backoff", session="s1")
    second = recorder.record_failure("api_client", "HTTP 502 from upstream service api", session="s2")
    assert second.similar == (first.error,)
    recorder.record_failure("disk_tool", "No space left on device", session="s2")
    if buffer is not None:
        buffer.flush()

    def objects(subject, predicate):
        return sorted(t.object for t in store.query_triples(subject=subject, predicate=predicate))

    assert objects(second.error, "caused_by") == ["tool:api_client"]
    assert objects(second.error, "in_session") == ["session:s2"]
    assert objects(second.error, "similar_to") == [first.error]
    assert objects(first.error, "resolved_by") == ["fix:retry with backoff"]
    assert objects("fix:retry with backoff", "learned_from") == ["session:s1"]

    # api_client now succeeds: its error is similar to the payments error, which the retry fixed
    updates = recorder.record_success("api_client")
    assert [(u.name, u.previous, round(u.confidence, 6)) for u in updates] == [("fix:retry with backoff", 0.5, 0.53)]
    assert recorder.record_success("disk_tool") == []


def test_recorder_options_are_checked(store):
    with pytest.raises(ConfigurationError):
        ErrorResolutionRecorder(object())
    with pytest.raises(ConfigurationError, match="propagation_rate"):
        ErrorResolutionRecorder(store, propagation_rate=0)
