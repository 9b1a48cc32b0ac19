"""Edge building at ingestion: sequence edges, batching, the prompt, answer parsing and
validation, dedup, pruning, threaded LLM extraction, similarity edges and the options.
The chat model is a scripted class answering per prompt; no network, no mock library."""

from __future__ import annotations

import json
import logging
import re
import threading

import pytest

from kgrag_neo4j.errors import (
    ConfigurationError,
    DimensionMismatchError,
    InputError,
    ProviderError,
    ProviderResponseError,
)
from kgrag_neo4j.ingestion.edges import (
    EDGE_RESPONSE_SCHEMA,
    IngestGraphOptions,
    build_document_edges,
    build_edge_prompt,
    build_sequence_edges,
    dedupe_edges,
    extract_llm_edges,
    make_batches,
    parse_edges,
    prune_edges,
    similarity_edges,
)
from kgrag_neo4j.types import Chunk, ChunkEdge, RelationType

R = RelationType


def chunks(n: int, *, parent: str | None = None, start: int = 0) -> list[Chunk]:
    return [
        Chunk(id=f"c{i}", document_id="d", content=f"text {i}", chunk_index=i, parent_id=parent) for i in range(start, start + n)
    ]


def as_tuples(edges):
    return [(e.source_id, e.target_id, str(e.relation), e.weight) for e in edges]


class ScriptedChat:
    """A ChatProvider answering from a script keyed by the chunk ids a prompt carries.

    ``script`` maps a tuple of ids to an answer text or an exception to raise; a missing key
    answers ``{"edges": []}``. ``on_call`` runs before answering (to cancel, or to meet at a
    barrier).
    """

    def __init__(self, script=None, *, on_call=None):
        self.script = dict(script or {})
        self.on_call = on_call
        self.prompts: list[tuple[str, ...]] = []
        self.schemas: list[object] = []
        self._lock = threading.Lock()

    def chat(self, messages, *, json_schema=None):
        prompt = messages[-1]["content"]
        ids = tuple(re.findall(r"^\[([^\]]+)\]: ", prompt, re.MULTILINE))
        with self._lock:
            self.prompts.append(ids)
            self.schemas.append(json_schema)
        if self.on_call is not None:
            self.on_call(ids)
        answer = self.script.get(ids, '{"edges": []}')
        if isinstance(answer, Exception):
            raise answer
        return answer


def answer(*edges) -> str:
    rows = [{"source": s, "target": t, "relation": r, "weight": w, "description": f"{s}->{t}"} for s, t, r, w in edges]
    return json.dumps({"edges": rows})


# --- sequence edges ----------------------------------------------------------------------


def test_sequence_edges_flat_sorted_by_index():
    c = chunks(3)
    edges = build_sequence_edges([c[2], c[0], c[1]])
    assert as_tuples(edges) == [("c0", "c1", "sequence", 1.0), ("c1", "c2", "sequence", 1.0)]
    assert all(e.origin == "sequence" and e.relation is R.SEQUENCE for e in edges)


def test_sequence_edges_parent_child_link_only_siblings():
    pa = Chunk(id="PA", document_id="d", content="", chunk_index=0)
    a = chunks(3, parent="PA", start=1)  # c1..c3
    pb = Chunk(id="PB", document_id="d", content="", chunk_index=4)
    b = chunks(2, parent="PB", start=5)  # c5, c6
    edges = build_sequence_edges([pb, *b, pa, *a])
    # parents share the top-level group, so consecutive parents are linked too
    assert sorted((e.source_id, e.target_id) for e in edges) == [("PA", "PB"), ("c1", "c2"), ("c2", "c3"), ("c5", "c6")]


def _pc(cid, index, parent=None):
    return Chunk(id=cid, document_id="d", content="", chunk_index=index, parent_id=parent)


# The Ingestor numbers parents and children separately (parents 0, 1, ...; children 0, 1, ...),
# so their indices interleave: a sort over all chunks puts parents between siblings.
@pytest.mark.parametrize(
    "given, expected",
    [
        (  # the Ingestor's numbering: P0 {a0 a1 a2}, P1 {b3 b4}
            [
                _pc("P0", 0),
                _pc("a0", 0, "P0"),
                _pc("a1", 1, "P0"),
                _pc("a2", 2, "P0"),
                _pc("P1", 1),
                _pc("b3", 3, "P1"),
                _pc("b4", 4, "P1"),
            ],
            {("P0", "P1"), ("a0", "a1"), ("a1", "a2"), ("b3", "b4")},
        ),
        (  # a parent whose index equals a child's sits between siblings after a global sort
            [
                _pc("P0", 0),
                _pc("P1", 1),
                _pc("P2", 2),
                _pc("x0", 0, "P0"),
                _pc("x1", 1, "P0"),
                _pc("x2", 2, "P0"),
                _pc("x3", 3, "P0"),
            ],
            {("P0", "P1"), ("P1", "P2"), ("x0", "x1"), ("x1", "x2"), ("x2", "x3")},
        ),
        (  # children given out of order and mixed with another group
            [_pc("y2", 7, "P1"), _pc("x1", 5, "P0"), _pc("y1", 6, "P1"), _pc("x0", 2, "P0")],
            {("x0", "x1"), ("y1", "y2")},
        ),
        ([_pc("only", 0, "P0"), _pc("P0", 0)], set()),
    ],
)
def test_sequence_edges_group_by_parent_before_sorting(given, expected):
    edges = build_sequence_edges(given)
    assert {(e.source_id, e.target_id) for e in edges} == expected
    assert len(edges) == len(expected)
    assert all(e.weight == 1.0 and e.relation is R.SEQUENCE and e.origin == "sequence" for e in edges)


@pytest.mark.parametrize("n", [0, 1])
def test_sequence_edges_need_two_chunks(n):
    assert build_sequence_edges(chunks(n)) == []


# --- batching ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "n, size, overlap, expected",
    [
        (12, 5, 0, [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9], [10, 11]]),
        (11, 5, 0, [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]),  # a last window of one chunk is dropped
        (7, 3, 1, [[0, 1, 2], [2, 3, 4], [4, 5, 6]]),  # stride 2
        (5, 3, 2, [[0, 1, 2], [1, 2, 3], [2, 3, 4]]),  # stride 1, stops once the end is reached
        (5, 5, 0, [[0, 1, 2, 3, 4]]),
        (2, 5, 0, [[0, 1]]),
        (1, 5, 0, []),
        (0, 2, 1, []),
        (4, 2, 1, [[0, 1], [1, 2], [2, 3]]),
    ],
)
def test_make_batches_windows(n, size, overlap, expected):
    assert make_batches(list(range(n)), batch_size=size, overlap=overlap) == expected


@pytest.mark.parametrize(
    "size, overlap, named",
    [(1, 0, "batch size"), (2.5, 0, "batch size"), (5, 5, "less than"), (5, 6, "less than"), (5, -1, "overlap")],
)
def test_make_batches_rejects_bad_options(size, overlap, named):
    with pytest.raises(ConfigurationError, match=named):
        make_batches([1, 2, 3], batch_size=size, overlap=overlap)


# --- prompt ------------------------------------------------------------------------------


def test_prompt_lists_chunks_relations_and_format():
    prompt = build_edge_prompt(chunks(3))
    lines = prompt.splitlines()
    for i in range(3):
        assert f"[c{i}]: text {i}" in lines
    for relation in RelationType:
        assert relation.value in prompt
    assert '"edges"' in prompt and '"source"' in prompt and '"weight"' in prompt


# --- parsing and validation --------------------------------------------------------------

BATCH = ["a", "b", "c"]
GOOD = {"source": "a", "target": "b", "relation": "depends_on", "weight": 0.8, "description": " why "}


@pytest.mark.parametrize(
    "change, kept",
    [
        ({}, True),
        ({"source": "z"}, False),  # source outside the batch
        ({"target": "zz"}, False),  # target outside the batch
        ({"target": "a"}, False),  # self edge
        ({"relation": "friend_of"}, False),
        ({"relation": 3}, False),
        ({"relation": " Depends_On "}, True),  # case and spaces are not a different relation
        ({"weight": 0}, False),
        ({"weight": -0.1}, False),
        ({"weight": 1.01}, False),
        ({"weight": "0.8"}, False),
        ({"weight": True}, False),
        ({"weight": None}, False),
        ({"weight": 1}, True),  # (0, 1] includes 1
        ({"weight": 1e-9}, True),
        ({"source": "[a]"}, True),  # brackets copied from the prompt
        ({"source": 7}, False),
    ],
)
def test_parse_edges_validation_rules(change, kept):
    raw = {**GOOD, **change}
    edges = parse_edges(json.dumps({"edges": [raw]}), BATCH)
    if not kept:
        assert edges == []
        return
    assert len(edges) == 1
    e = edges[0]
    assert (e.source_id, e.target_id, e.relation, e.origin) == ("a", "b", R.DEPENDS_ON, "llm")
    assert e.weight == pytest.approx(float(raw["weight"]))
    assert e.description == "why"


def test_parse_edges_missing_relation_or_description():
    no_rel = {k: v for k, v in GOOD.items() if k != "relation"}
    no_desc = {k: v for k, v in GOOD.items() if k != "description"}
    edges = parse_edges(json.dumps({"edges": [no_rel, no_desc, "a->b"]}), BATCH)
    assert [(e.source_id, e.description) for e in edges] == [("a", "")]


@pytest.mark.parametrize(
    "text",
    [
        json.dumps({"edges": [GOOD]}),
        json.dumps([GOOD]),  # a bare list
        "```json\n" + json.dumps({"edges": [GOOD]}) + "\n```",
        "```\n" + json.dumps([GOOD]) + "\n```",
        "Here are the edges:\n" + json.dumps({"edges": [GOOD]}) + "\nHope this helps.",
    ],
    ids=["object", "list", "json-fence", "bare-fence", "prose"],
)
def test_parse_edges_tolerant_formats(text):
    assert as_tuples(parse_edges(text, BATCH)) == [("a", "b", "depends_on", 0.8)]


def test_parse_edges_keeps_valid_drops_invalid():
    text = json.dumps({"edges": [GOOD, {**GOOD, "target": "nope"}, {**GOOD, "source": "c", "relation": "sequence"}]})
    got = [(x.source_id, str(x.relation)) for x in parse_edges(text, BATCH)]
    assert got == [("a", "depends_on"), ("c", "sequence")]


def test_parse_edges_empty_answer_is_no_edges():
    assert parse_edges('{"edges": []}', BATCH) == []


@pytest.mark.parametrize(
    "text, message",
    [
        ("I could not find anything.", "not JSON"),
        ('{"edges": [', "not JSON"),
        ('{"nodes": []}', "no 'edges'"),
        ('{"edges": "none"}', "must be a list"),
        ("42", "must be a list"),
    ],
)
def test_parse_edges_invalid_answers_raise(text, message):
    with pytest.raises(ProviderResponseError, match=message):
        parse_edges(text, BATCH)


# --- dedup and pruning -------------------------------------------------------------------


def mk(src, dst, weight, relation=R.REFERENCES, description=""):
    return ChunkEdge(src, dst, relation, weight, description=description)


def test_dedupe_keeps_highest_weight_per_key():
    edges = [
        mk("a", "b", 0.5, description="first"),
        mk("a", "b", 0.9, description="best"),
        mk("a", "b", 0.7),
        mk("a", "b", 0.6, R.ELABORATES),
        mk("b", "a", 0.4),
        mk("a", "b", 0.9, description="later tie"),
    ]
    got = dedupe_edges(edges)
    assert [(x.source_id, x.target_id, str(x.relation), x.weight, x.description) for x in got] == [
        ("a", "b", "references", 0.9, "best"),
        ("a", "b", "elaborates", 0.6, ""),
        ("b", "a", "references", 0.4, ""),
    ]


PRUNE_EDGES = [
    mk("a", "x", 0.3),
    mk("a", "y", 0.9),
    mk("a", "z", 0.6),
    mk("a", "w", 0.6),
    mk("b", "x", 0.2),
    mk("b", "y", 0.5),
]


@pytest.mark.parametrize(
    "min_weight, max_per_chunk, expected",
    [
        (0.0, 0, [("a", "x"), ("a", "y"), ("a", "z"), ("a", "w"), ("b", "x"), ("b", "y")]),
        (0.5, 0, [("a", "y"), ("a", "z"), ("a", "w"), ("b", "y")]),  # >= is kept
        (0.0, 1, [("a", "y"), ("b", "y")]),
        (0.0, 2, [("a", "y"), ("a", "w"), ("b", "x"), ("b", "y")]),  # 0.6 tie: target w before z
        (0.55, 2, [("a", "y"), ("a", "w")]),
        (1.0, 0, []),
    ],
)
def test_prune_edges(min_weight, max_per_chunk, expected):
    got = prune_edges(PRUNE_EDGES, min_weight=min_weight, max_edges_per_chunk=max_per_chunk)
    assert [(x.source_id, x.target_id) for x in got] == expected


@pytest.mark.parametrize("kwargs", [dict(min_weight=-0.1), dict(min_weight=2), dict(max_edges_per_chunk=-1)])
def test_prune_edges_rejects_bad_options(kwargs):
    with pytest.raises(ConfigurationError):
        prune_edges(PRUNE_EDGES, **kwargs)


# --- LLM extraction ----------------------------------------------------------------------

C5 = chunks(5)


def test_extract_dedupes_across_overlapping_batches():
    # batch 3, overlap 2 -> (c0,c1,c2), (c1,c2,c3), (c2,c3,c4)
    chat = ScriptedChat(
        {
            ("c0", "c1", "c2"): answer(("c1", "c2", "depends_on", 0.6), ("c0", "c4", "references", 0.9)),
            ("c1", "c2", "c3"): answer(("c1", "c2", "depends_on", 0.9), ("c3", "c1", "elaborates", 0.5)),
            ("c2", "c3", "c4"): answer(("c4", "c3", "sequence", 0.7)),
        }
    )
    edges = extract_llm_edges(C5, chat, batch_size=3, overlap=2, workers=2)
    assert sorted(chat.prompts) == [("c0", "c1", "c2"), ("c1", "c2", "c3"), ("c2", "c3", "c4")]
    # c0 -> c4 is dropped: c4 is not in the first batch.
    assert sorted(as_tuples(edges)) == [
        ("c1", "c2", "depends_on", 0.9),
        ("c3", "c1", "elaborates", 0.5),
        ("c4", "c3", "sequence", 0.7),
    ]
    assert all(x.origin == "llm" for x in edges)
    assert chat.schemas == [EDGE_RESPONSE_SCHEMA] * 3


@pytest.mark.parametrize("failure", [ProviderError("rate limited"), "this is not json"], ids=["provider-error", "invalid-json"])
def test_extract_skips_a_failing_batch_with_a_warning(caplog, failure):
    chat = ScriptedChat(
        {
            ("c0", "c1"): answer(("c0", "c1", "references", 0.8)),
            ("c2", "c3"): failure,
            ("c4", "c5"): answer(("c5", "c4", "caused_by", 0.6)),
        }
    )
    with caplog.at_level(logging.WARNING, logger="kgrag_neo4j.ingestion.edges"):
        edges = extract_llm_edges(chunks(6), chat, batch_size=2, workers=1)
    assert as_tuples(edges) == [("c0", "c1", "references", 0.8), ("c5", "c4", "caused_by", 0.6)]
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "batch 2 of 3" in warnings[0].getMessage()


def test_extract_warns_on_the_given_logger(caplog):
    chat = ScriptedChat({("c0", "c1"): RuntimeError("boom")})
    custom = logging.getLogger("my.app.ingest")
    with caplog.at_level(logging.WARNING, logger="my.app.ingest"):
        assert extract_llm_edges(chunks(2), chat, logger=custom) == []
    assert [r.name for r in caplog.records if r.levelno == logging.WARNING] == ["my.app.ingest"]
    assert "boom" in caplog.text


def test_extract_cancel_after_first_batch_sends_no_more():
    cancel = threading.Event()
    chat = ScriptedChat(
        {("c0", "c1"): answer(("c0", "c1", "references", 0.8)), ("c2", "c3"): answer(("c2", "c3", "references", 0.8))},
        on_call=lambda ids: cancel.set(),
    )
    edges = extract_llm_edges(chunks(6), chat, batch_size=2, workers=1, cancel=cancel)
    assert chat.prompts == [("c0", "c1")]
    assert as_tuples(edges) == [("c0", "c1", "references", 0.8)]


def test_extract_cancelled_before_start_sends_nothing():
    cancel = threading.Event()
    cancel.set()
    chat = ScriptedChat()
    assert extract_llm_edges(C5, chat, batch_size=2, cancel=cancel) == []
    assert chat.prompts == []


def test_extract_runs_batches_concurrently():
    # Three workers must be inside chat() at the same time to pass the barrier; run one at
    # a time and the barrier breaks, every batch fails and no edge comes back.
    barrier = threading.Barrier(3, timeout=10)
    script = {tuple(f"c{i}" for i in range(s, s + 2)): answer((f"c{s}", f"c{s + 1}", "sequence", 1.0)) for s in (0, 2, 4)}
    chat = ScriptedChat(script, on_call=lambda ids: barrier.wait())
    edges = extract_llm_edges(chunks(6), chat, batch_size=2, workers=3)
    assert sorted(as_tuples(edges)) == [(f"c{s}", f"c{s + 1}", "sequence", 1.0) for s in (0, 2, 4)]


@pytest.mark.parametrize("n", [0, 1])
def test_extract_needs_two_chunks(n):
    chat = ScriptedChat()
    assert extract_llm_edges(chunks(n), chat) == [] and chat.prompts == []


@pytest.mark.parametrize("workers", [0, -2, 1.5])
def test_extract_rejects_bad_workers(workers):
    with pytest.raises(ConfigurationError, match="workers"):
        extract_llm_edges(C5, ScriptedChat(), workers=workers)


# --- similarity edges --------------------------------------------------------------------

# cos(a, b) = 0.8, cos(a, c) = 0, cos(b, c) = 0.6, d == a (cos 1), e is the zero vector.
VECTORS = {"a": [1.0, 0.0], "b": [0.8, 0.6], "c": [0.0, 1.0], "d": [2.0, 0.0], "e": [0.0, 0.0]}


@pytest.mark.parametrize(
    "k, threshold, expected",
    [
        (
            5,
            0.75,
            [("a", "d", 1.0), ("a", "b", 0.8), ("b", "a", 0.8), ("b", "d", 0.8), ("d", "a", 1.0), ("d", "b", 0.8)],
        ),
        (1, 0.75, [("a", "d", 1.0), ("b", "a", 0.8), ("d", "a", 1.0)]),  # b: tie a/d -> a listed first
        (5, 0.9, [("a", "d", 1.0), ("d", "a", 1.0)]),
        (1, 0.5, [("a", "d", 1.0), ("b", "a", 0.8), ("c", "b", 0.6), ("d", "a", 1.0)]),
        (5, 0.0, None),  # zero threshold still never links orthogonal or zero vectors
    ],
)
def test_similarity_edges(k, threshold, expected):
    edges = similarity_edges(list(VECTORS), list(VECTORS.values()), k=k, threshold=threshold)
    got = [(x.source_id, x.target_id, round(x.weight, 9)) for x in edges]
    if expected is None:
        assert ("a", "c") not in {(s, t) for s, t, _ in got}
        assert all("e" not in (s, t) for s, t, _ in got)
        assert all(w > 0 for _, _, w in got)
    else:
        assert got == expected
    assert all(x.relation is R.SIMILAR_TO and x.origin == "similarity" and 0 < x.weight <= 1.0 for x in edges)


def test_similarity_edges_bad_input():
    with pytest.raises(InputError, match="ids"):
        similarity_edges(["a", "b"], [[1.0, 0.0]])
    with pytest.raises(InputError, match="duplicate"):
        similarity_edges(["a", "a"], [[1.0], [1.0]])
    with pytest.raises(DimensionMismatchError):
        similarity_edges(["a", "b"], [[1.0, 0.0], [1.0]])
    with pytest.raises(ConfigurationError, match="threshold"):
        similarity_edges(["a", "b"], [[1.0], [1.0]], threshold=1.5)
    with pytest.raises(ConfigurationError, match="top k"):
        similarity_edges(["a", "b"], [[1.0], [1.0]], k=0)
    assert similarity_edges(["a"], [[1.0]]) == []


# --- options and the per-document pipeline -----------------------------------------------


def test_ingest_graph_options_defaults_are_the_seeds():
    o = IngestGraphOptions()
    assert (o.graph_extraction, o.graph_batch_size, o.graph_batch_overlap) == (None, 5, 0)
    assert o.graph_extraction_workers == 3
    assert (o.min_edge_weight, o.max_edges_per_chunk, o.sequence_edges) == (0.0, 0, False)
    assert (o.similarity_edges, o.similarity_threshold, o.similarity_top_k) == (False, 0.75, 5)
    assert o.cross_document_edges is False
    assert not o.enabled
    assert IngestGraphOptions(graph_extraction=ScriptedChat()).enabled


@pytest.mark.parametrize(
    "kwargs, named",
    [
        (dict(graph_extraction="gpt"), "graph_extraction"),
        (dict(graph_batch_size=1), "batch size"),
        (dict(graph_batch_overlap=5), "overlap"),
        (dict(graph_extraction_workers=0), "graph_extraction_workers"),
        (dict(min_edge_weight=1.5), "min_edge_weight"),
        (dict(max_edges_per_chunk=-1), "max_edges_per_chunk"),
        (dict(sequence_edges=1), "sequence_edges"),
        (dict(similarity_threshold=-0.1), "similarity_threshold"),
        (dict(similarity_top_k=0), "similarity_top_k"),
        (dict(cross_document_edges="no"), "cross_document_edges"),
    ],
)
def test_ingest_graph_options_validation(kwargs, named):
    with pytest.raises(ConfigurationError, match=named):
        IngestGraphOptions(**kwargs)


def test_build_document_edges_combines_dedupes_and_prunes():
    c = chunks(4)
    for chunk, vector in zip(c, ([1.0, 0.0], [0.0, 1.0], [0.0, 1.0], [1.0, 0.05])):
        chunk.embedding = vector
    chat = ScriptedChat(
        {
            ("c0", "c1", "c2", "c3"): answer(
                ("c0", "c1", "sequence", 0.4),  # duplicates the sequence edge: weight 1.0 wins
                ("c0", "c2", "elaborates", 0.9),
                ("c0", "c3", "references", 0.2),  # below min_edge_weight
            )
        }
    )
    options = IngestGraphOptions(
        graph_extraction=chat, sequence_edges=True, similarity_edges=True, min_edge_weight=0.3, max_edges_per_chunk=2
    )
    edges = build_document_edges(c, options)
    got = {(x.source_id, x.target_id, str(x.relation)): (round(x.weight, 6), x.origin) for x in edges}
    cos_03 = round(1.0 / (1.0 + 0.05**2) ** 0.5, 6)
    assert got == {
        ("c0", "c1", "sequence"): (1.0, "sequence"),
        ("c1", "c2", "sequence"): (1.0, "sequence"),
        ("c2", "c3", "sequence"): (1.0, "sequence"),
        ("c0", "c3", "similar_to"): (cos_03, "similarity"),  # c0 keeps its 2 heaviest: 1.0 and 0.9987..
        ("c1", "c2", "similar_to"): (1.0, "similarity"),  # c1: sequence 1.0 + similar_to 1.0
        ("c2", "c1", "similar_to"): (1.0, "similarity"),
        ("c3", "c0", "similar_to"): (cos_03, "similarity"),
    }


# --- cross-document batches --------------------------------------------------------------


def _c(cid):
    return Chunk(id=cid, document_id="doc-" + cid[0], content=cid)


@pytest.mark.parametrize(
    "pairs, batch_size, expected",
    [
        # one source, three candidates, two chunks per call: one call per candidate
        ([("a1", "b1"), ("a1", "c1"), ("a1", "d1")], 2, [["a1", "b1"], ["a1", "c1"], ["a1", "d1"]]),
        # the default of five: source and its three candidates in one call
        ([("a1", "b1"), ("a1", "c1"), ("a1", "d1")], 5, [["a1", "b1", "c1", "d1"]]),
        # more candidates than fit: the source is repeated in each call
        ([("a1", t) for t in ("b1", "b2", "b3", "b4", "b5")], 3, [["a1", "b1", "b2"], ["a1", "b3", "b4"], ["a1", "b5"]]),
        # sources with few candidates share a call while the chunks fit
        ([("a1", "b1"), ("a2", "b2"), ("a3", "b3")], 5, [["a1", "b1", "a2", "b2"], ["a3", "b3"]]),
        # a chunk that is both a target and a source counts once
        ([("a1", "b1"), ("b1", "a1"), ("b1", "c1")], 3, [["a1", "b1", "c1"]]),
        # repeated pairs and self pairs are ignored
        ([("a1", "b1"), ("a1", "b1"), ("a1", "a1")], 5, [["a1", "b1"]]),
        ([], 5, []),
    ],
)
def test_cross_document_batches(pairs, batch_size, expected):
    from kgrag_neo4j.ingestion.edges import cross_document_batches

    got = cross_document_batches([(_c(s), _c(t)) for s, t in pairs], batch_size=batch_size)
    assert [[c.id for c in b] for b in got] == expected
    for s, t in pairs:
        if s != t:
            assert any({s, t} <= {c.id for c in b} for b in got)
    assert all(2 <= len(b) <= batch_size for b in got)


@pytest.mark.parametrize("batch_size", [1, 0, True, 2.5])
def test_cross_document_batches_reject_bad_sizes(batch_size):
    from kgrag_neo4j.ingestion.edges import cross_document_batches

    with pytest.raises(ConfigurationError, match="batch size"):
        cross_document_batches([(_c("a1"), _c("b1"))], batch_size=batch_size)


# --- pruning what is already stored -------------------------------------------------------


@pytest.mark.parametrize(
    "min_weight, max_per_chunk, dropped",
    [
        (0.0, 0, []),
        (0.5, 0, [("a", "d", "similar_to")]),
        (0.0, 1, [("a", "c", "similar_to"), ("a", "d", "similar_to")]),
        (0.0, 2, [("a", "d", "similar_to")]),
        (0.9, 1, [("a", "c", "similar_to"), ("a", "d", "similar_to"), ("b", "c", "similar_to")]),
    ],
)
def test_edges_to_prune_is_what_prune_edges_drops(min_weight, max_per_chunk, dropped):
    from kgrag_neo4j.ingestion.edges import edges_to_prune

    stored = [
        ChunkEdge("a", "b", R.SEQUENCE, 1.0, origin="sequence"),
        ChunkEdge("a", "c", R.SIMILAR_TO, 0.7, origin="similarity"),
        ChunkEdge("a", "d", R.SIMILAR_TO, 0.4, origin="similarity"),
        ChunkEdge("b", "c", R.SIMILAR_TO, 0.8, origin="similarity"),
    ]
    doomed = edges_to_prune(stored, min_weight=min_weight, max_edges_per_chunk=max_per_chunk)
    assert [(e.source_id, e.target_id, str(e.relation)) for e in doomed] == dropped
    kept = prune_edges(stored, min_weight=min_weight, max_edges_per_chunk=max_per_chunk)
    assert len(kept) + len(doomed) == len(stored)
