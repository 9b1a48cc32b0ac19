"""Triples without a database: the model, the predicate registry, parsing, extraction, the buffer."""

from __future__ import annotations

import json
import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgrag_neo4j.errors import InputError, KgragError, ProviderError
from kgrag_neo4j.triples import BufferClosedError, BufferFullError, GraphBuffer, extract_triples, parse_triples
from kgrag_neo4j.triples.buffer import THREAD_NAME
from kgrag_neo4j.types.triples import (
    CAUSED_BY,
    DEFAULT_PREDICATES,
    EXPANSION_PREDICATES,
    RELATED_TO,
    RESOLVED_BY,
    PredicateRegistry,
    Triple,
    normalise_predicate,
)

REGISTRY = PredicateRegistry()


# --- model and registry ---------------------------------------------------------------------


def test_the_seed_predicates():
    assert DEFAULT_PREDICATES == {
        "related_to",
        "caused_by",
        "resolved_by",
        "follows",
        "similar_to",
        "contains",
        "in_session",
        "reflects_on",
        "learned_from",
    }
    assert set(EXPANSION_PREDICATES) == {"related_to", "resolved_by", "caused_by", "similar_to"}
    assert REGISTRY.names == tuple(sorted(DEFAULT_PREDICATES))


def test_registry_allows_declared_extras_only():
    assert "depends_on" not in REGISTRY
    wider = PredicateRegistry(extra=["depends_on"])
    assert "depends_on" in wider and CAUSED_BY in wider
    assert "mentions" in wider.with_extra("mentions") and "depends_on" in wider.with_extra("mentions")
    assert wider.validate("Depends On") == "depends_on"
    with pytest.raises(InputError, match="allowed: caused_by"):
        REGISTRY.validate("depends_on")


@pytest.mark.parametrize("name", ["Bad", "1abc", "a-b", "_x", "", "a" * 65, "caused by", "é"])
def test_registry_rejects_invalid_names(name):
    with pytest.raises(InputError, match="not a valid name"):
        PredicateRegistry(extra=[name])


def test_registry_accepts_a_64_character_name_and_refuses_a_bare_string():
    assert ("a" * 64) in PredicateRegistry(extra=["a" * 64])
    with pytest.raises(InputError, match="list of names"):
        PredicateRegistry(extra="depends_on")


@pytest.mark.parametrize(
    "raw, expected",
    [("caused_by", "caused_by"), ("Caused By", "caused_by"), ("resolved-by", "resolved_by"), (" `follows` ", "follows")],
)
def test_normalise_predicate(raw, expected):
    assert normalise_predicate(raw) == expected


@pytest.mark.parametrize(
    "args, message",
    [
        (("", RELATED_TO, "b"), "subject"),
        (("a", RELATED_TO, "  "), "object"),
        (("a", "Related To", "b"), "not a valid name"),
        (("a" * 513, RELATED_TO, "b"), "longer than 512"),
    ],
)
def test_triple_validation(args, message):
    with pytest.raises(InputError, match=message):
        Triple(*args)


def test_triple_equality_ignores_metadata():
    assert Triple("a", RELATED_TO, "b", {"session": "1"}) == Triple("a", RELATED_TO, "b")
    assert Triple("a", RELATED_TO, "b", {"n": 1}).metadata == {"n": "1"}


# --- parsing --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected, dropped",
    [
        ("error:timeout|caused_by|tool:http_client", [("error:timeout", "caused_by", "tool:http_client")], 0),
        ("  a | related_to | b  ", [("a", "related_to", "b")], 0),
        (
            "- a|Resolved By|b\n* c|similar-to|d\n1. e|follows|f",
            [("a", "resolved_by", "b"), ("c", "similar_to", "d"), ("e", "follows", "f")],
            0,
        ),
        ("| a | contains | b |", [("a", "contains", "b")], 0),
        ("```\na|in_session|s1\n```", [("a", "in_session", "s1")], 0),
        ("# comment\n\na|learned_from|s1\n\n", [("a", "learned_from", "s1")], 0),
        ("a|related_to|b\na|related_to|b", [("a", "related_to", "b")], 0),
        ("a|depends_on|b", [], 1),
        ("a|related_to", [], 1),
        ("a|related_to|b|c", [], 1),
        ("just prose, no triples", [], 1),
        ("|related_to|b", [], 1),
        ("a| |b", [], 1),
        ("Subject|Predicate|Object\nx|reflects_on|y", [("x", "reflects_on", "y")], 1),
        ("a|related_to|" + "b" * 513, [], 1),
    ],
)
def test_parse_triple_lines(text, expected, dropped):
    parsed = parse_triples(text, REGISTRY)
    assert [t.key() for t in parsed] == expected
    assert parsed.dropped == dropped == len(parsed.problems)


@pytest.mark.parametrize(
    "text",
    [
        json.dumps(
            [
                {"subject": "a", "predicate": "caused_by", "object": "b"},
                {"subject": "c", "predicate": "nope", "object": "d"},
                "junk",
            ]
        ),
        json.dumps(
            {
                "triples": [
                    {"subject": "a", "predicate": "Caused By", "object": "b"},
                    {"subject": "c", "predicate": "nope", "object": "d"},
                    {"subject": "x"},
                ]
            }
        ),
        "```json\n"
        + json.dumps(
            [{"subject": "a", "predicate": "caused_by", "object": "b"}, {"subject": "", "predicate": "follows", "object": "d"}, 3]
        )
        + "\n```",
    ],
)
def test_parse_triple_json(text):
    parsed = parse_triples(text, REGISTRY)
    assert [t.key() for t in parsed] == [("a", "caused_by", "b")]
    assert parsed.dropped == 2


def test_parse_json_metadata_and_extra_predicates():
    text = json.dumps({"triples": [{"subject": "a", "predicate": "depends_on", "object": "b", "metadata": {"confidence": 0.7}}]})
    assert parse_triples(text, REGISTRY).dropped == 1
    (t,) = parse_triples(text, PredicateRegistry(extra=["depends_on"]))
    assert t.metadata == {"confidence": "0.7"}


_term = st.text(
    alphabet=st.characters(blacklist_characters="|\n\r`#", blacklist_categories=("Cs", "Zl", "Zp", "Cc")), min_size=1, max_size=30
).filter(lambda s: s.strip() and not s.lstrip().startswith(("-", "*", "+", "\u2022")) and not s.strip()[0].isdigit())


@settings(max_examples=100)
@given(st.lists(st.tuples(_term, st.sampled_from(sorted(DEFAULT_PREDICATES)), _term), max_size=10))
def test_formatted_triples_parse_back(rows):
    text = "\n".join(f"{s}|{p}|{o}" for s, p, o in rows)
    parsed = parse_triples(text, REGISTRY)
    expected = []
    for s, p, o in rows:
        key = (" ".join(s.split()), p, " ".join(o.split()))
        if key not in expected:
            expected.append(key)
    assert [t.key() for t in parsed] == expected
    assert parsed.dropped == 0


class ScriptedChat:
    def __init__(self, answer):
        self.answer = answer
        self.calls = []

    def chat(self, messages, *, json_schema=None):
        self.calls.append(messages)
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer


def test_extract_triples_validates_and_attaches_metadata():
    chat = ScriptedChat("timeout|caused_by|latency\ntimeout|fixes|retry\nretry|learned_from|s1")
    triples = extract_triples("The timeout came from latency.", chat, REGISTRY, metadata={"session": "s1"})
    assert [t.key() for t in triples] == [("timeout", "caused_by", "latency"), ("retry", "learned_from", "s1")]
    assert all(t.metadata == {"session": "s1"} for t in triples)
    prompt = chat.calls[0][0]["content"]
    for name in DEFAULT_PREDICATES:
        assert f"- {name}:" in prompt
    assert chat.calls[0][-1]["content"] == "The timeout came from latency."


def test_extract_triples_extra_predicates_and_edge_cases():
    chat = ScriptedChat("a|depends_on|b")
    registry = PredicateRegistry(extra=["depends_on"])
    assert [t.key() for t in extract_triples("text", chat, registry)] == [("a", "depends_on", "b")]
    assert "- depends_on: declared by the application" in chat.calls[0][0]["content"]
    assert extract_triples("   ", chat, REGISTRY) == [] and len(chat.calls) == 1
    with pytest.raises(ProviderError):
        extract_triples("text", ScriptedChat(ProviderError("down")), REGISTRY)


# --- the buffer -----------------------------------------------------------------------------


def triples(n: int, start: int = 0) -> list[Triple]:
    return [Triple(f"s{i}", RELATED_TO, f"o{i}") for i in range(start, start + n)]


class Recorder:
    """A write_fn that records batches; fails the first ``failures`` calls."""

    def __init__(self, failures: int = 0, exc: Exception | None = None):
        self.batches: list[list[Triple]] = []
        self.calls = 0
        self.failures = failures
        self.exc = exc or RuntimeError("database unavailable")
        self.threads: set[str] = set()
        self._lock = threading.Lock()

    def __call__(self, batch):
        with self._lock:
            self.calls += 1
            self.threads.add(threading.current_thread().name)
            if self.calls <= self.failures:
                raise self.exc
            self.batches.append(list(batch))

    @property
    def written(self) -> int:
        with self._lock:
            return sum(len(b) for b in self.batches)


def wait_until(predicate, timeout: float = 5.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.005)
    return predicate()


def buffer_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == THREAD_NAME]


@pytest.fixture(autouse=True)
def no_leaked_buffer_thread():
    before = len(buffer_threads())
    yield
    assert wait_until(lambda: len(buffer_threads()) == before, 2.0), "a GraphBuffer thread outlived its test"


def test_size_flush_at_64():
    rec = Recorder()
    buf = GraphBuffer(rec, flush_interval=60).start()
    try:
        buf.enqueue(triples(63))
        time.sleep(0.2)
        assert rec.batches == []  # 63 < 64 and the timer is a minute away
        buf.enqueue(triples(1, start=63))
        assert wait_until(lambda: rec.written == 64)
        assert [len(b) for b in rec.batches] == [64]
        buf.enqueue(triples(130, start=64))
        assert wait_until(lambda: rec.written == 192)
        time.sleep(0.1)
        assert [len(b) for b in rec.batches] == [64, 64, 64] and buf.pending == 2
    finally:
        assert buf.stop(timeout=5)
    assert [len(b) for b in rec.batches] == [64, 64, 64, 2]
    assert [t.subject for b in rec.batches for t in b] == [f"s{i}" for i in range(194)]  # in order
    assert rec.threads == {THREAD_NAME}


def test_time_flush():
    rec = Recorder()
    with GraphBuffer(rec, flush_interval=0.05) as buf:
        started = time.monotonic()
        buf.enqueue(triples(3))
        assert wait_until(lambda: rec.written == 3, 2.0)
        assert time.monotonic() - started >= 0.04
        assert [len(b) for b in rec.batches] == [3]
        assert buf.stats.flushes == 1


def test_stop_flushes_what_is_left_and_joins():
    rec = Recorder()
    buf = GraphBuffer(rec, flush_interval=60).start()
    thread = buffer_threads()[-1]
    assert not thread.daemon
    buf.enqueue(triples(10))
    assert buf.stop(timeout=5)
    assert rec.written == 10 and not thread.is_alive()
    assert buf.stats.written == 10 and buf.stats.pending == 0
    with pytest.raises(BufferClosedError):
        buf.enqueue(triples(1))
    with pytest.raises(BufferClosedError):
        buf.start()
    assert buf.stop() is True  # idempotent


def test_explicit_flush_waits_for_the_write():
    rec = Recorder()
    with GraphBuffer(rec, flush_interval=60) as buf:
        buf.enqueue(triples(5))
        assert buf.flush(timeout=5)
        assert rec.written == 5


def test_without_a_thread_flush_and_stop_write_in_the_caller():
    rec = Recorder()
    buf = GraphBuffer(rec, batch_size=4)
    buf.enqueue(triples(10))
    assert rec.batches == [] and buf.pending == 10
    assert buf.flush()
    assert [len(b) for b in rec.batches] == [4, 4, 2]
    assert rec.threads == {threading.current_thread().name}
    buf.enqueue(triples(1))
    buf.stop()
    assert rec.written == 11 and buffer_threads() == []


def test_failed_flush_is_retried_then_reported_and_kept():
    rec = Recorder(failures=10**6)
    reported = []
    buf = GraphBuffer(
        rec, retries=2, retry_backoff=0.01, flush_interval=60, on_error=lambda exc, batch: reported.append((exc, batch))
    )
    with buf:
        buf.enqueue(triples(5))
        assert buf.flush(timeout=5)
    assert rec.calls == 3  # the first attempt and two retries
    ((exc, batch),) = reported
    assert isinstance(exc, RuntimeError) and [t.subject for t in batch] == [f"s{i}" for i in range(5)]
    assert buf.failed == batch
    stats = buf.stats
    assert (stats.written, stats.failed, stats.retries, stats.flushes) == (0, 5, 2, 1)
    assert buf.take_failed() == batch and buf.failed == []


def test_a_transient_failure_is_retried_to_success():
    rec = Recorder(failures=2)
    reported = []
    with GraphBuffer(rec, retries=3, retry_backoff=0.0, on_error=lambda *a: reported.append(a)) as buf:
        buf.enqueue(triples(4))
        buf.flush(timeout=5)
    assert rec.written == 4 and reported == [] and buf.failed == []
    assert buf.stats.retries == 2


def test_input_errors_are_not_retried_and_a_failing_handler_loses_nothing():
    rec = Recorder(failures=10**6, exc=InputError("bad triple"))

    def broken_handler(exc, batch):
        raise ValueError("handler bug")

    buf = GraphBuffer(rec, retries=5, retry_backoff=0.0, on_error=broken_handler)
    buf.enqueue(triples(2))
    buf.stop()
    assert rec.calls == 1 and len(buf.failed) == 2


def test_queue_full_raises_without_blocking():
    buf = GraphBuffer(Recorder(), batch_size=4, max_queue=5)
    buf.enqueue(triples(4))
    with pytest.raises(BufferFullError) as info:
        buf.enqueue(triples(2))  # all or nothing
    assert isinstance(info.value, KgragError) and info.value.retryable
    assert "5" in str(info.value) and buf.pending == 4
    buf.enqueue(triples(1))
    started = time.monotonic()
    with pytest.raises(BufferFullError):
        buf.enqueue(triples(1))
    with pytest.raises(BufferFullError):
        buf.enqueue(triples(1), block=True, timeout=0.1)
    waited = time.monotonic() - started
    assert 0.09 <= waited < 2.0
    with pytest.raises(InputError, match="never fit"):
        buf.enqueue(triples(6))
    buf.stop()


def test_blocking_enqueue_waits_for_room():
    gate = threading.Event()
    rec = Recorder()

    def slow_write(batch):
        gate.wait(5)
        rec(batch)

    with GraphBuffer(slow_write, batch_size=2, max_queue=2, flush_interval=0.01) as buf:
        buf.enqueue(triples(2))
        assert wait_until(lambda: buf.pending == 0)  # the thread took them and is writing
        buf.enqueue(triples(2, start=2))
        threading.Timer(0.05, gate.set).start()
        buf.enqueue(triples(1, start=4), block=True, timeout=5)
    assert rec.written == 5


@pytest.mark.parametrize(
    "kwargs",
    [
        {"batch_size": 0},
        {"max_queue": 10, "batch_size": 64},
        {"flush_interval": 0},
        {"retries": -1},
        {"retry_backoff": -1},
        {"on_error": 3},
    ],
)
def test_buffer_rejects_bad_options(kwargs):
    with pytest.raises(KgragError):
        GraphBuffer(Recorder(), **kwargs)


def test_enqueue_rejects_non_triples():
    with pytest.raises(InputError, match="Triple"):
        GraphBuffer(Recorder()).enqueue([("a", "related_to", "b")])


def test_concurrent_producers_lose_nothing():
    rec = Recorder()
    with GraphBuffer(rec, batch_size=16, flush_interval=0.01, max_queue=100) as buf:

        def produce(k):
            for i in range(200):
                buf.enqueue(Triple(f"p{k}", RESOLVED_BY, f"o{i}"), block=True, timeout=5)

        workers = [threading.Thread(target=produce, args=(k,)) for k in range(4)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
    assert rec.written == 800 and buf.stats.enqueued == 800
    assert len({(t.subject, t.object) for b in rec.batches for t in b}) == 800
