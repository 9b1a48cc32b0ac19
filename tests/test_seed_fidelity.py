"""The defects a seed-fidelity audit found, each pinned against the real server:

1. parent-child sequence edges link every pair of consecutive siblings;
2. cross-document extraction sends every candidate pair to the model, ``batch_size`` chunks
   per call;
3. ``cross_document_edges=True`` discovers cross-document edges during ingestion;
4. pruning (min weight, max per chunk) holds over every edge source, similarity included;
5. cancellation through the Ingestor, and ``ingest.document`` spans.
"""

from __future__ import annotations

import json
import re
import threading

import pytest

from kgrag_neo4j.errors import ConfigurationError
from kgrag_neo4j.ingestion.chunkers import RecursiveChunker
from kgrag_neo4j.ingestion.ingestor import Ingestor
from kgrag_neo4j.options import IngestGraphOptions
from kgrag_neo4j.types import RelationType

LONG = "\n\n".join(
    f"Paragraph {i} talks about topic {i % 3}. " + "It has several sentences with enough words to matter. " * 6 for i in range(12)
)


_TOPICS = [
    "graph nodes edges traversal paths",
    "vector index embedding cosine search",
    "cooking pasta water salt sauce",
    "music guitar chords rhythm song",
]
#: twelve paragraphs in four topics: similar within a topic (cosine ~0.55-0.6), not across
VARIED = "\n\n".join(
    f"Part {i} on {_TOPICS[i % 4].split()[0]}. "
    + " ".join(_TOPICS[i % 4].split() * 2)
    + " "
    + " ".join(f"w{i}x{j}" for j in range(8))
    + "."
    for i in range(12)
)
ONE_PER_PARAGRAPH = dict(max_tokens=40, overlap_tokens=0)


def ids_in(prompt: str) -> list[str]:
    return re.findall(r"^\[([^\]]+)\]: ", prompt, re.MULTILINE)


class ScriptedChat:
    """A ChatProvider answering with a function of the chunk ids in the prompt."""

    def __init__(self, answer=None):
        self.answer = answer or (lambda ids: {"edges": []})
        self.prompts: list[list[str]] = []
        self._lock = threading.Lock()

    def chat(self, messages, *, json_schema=None):
        ids = ids_in(messages[-1]["content"])
        with self._lock:
            self.prompts.append(ids)
        return json.dumps(self.answer(ids))


def link_first_two(ids):
    return {
        "edges": [{"source": ids[0], "target": ids[1], "relation": "references", "weight": 0.8, "description": "mentions it"}]
    }


# --- 1. sequence edges under the parent-child strategy -----------------------------------


def _sibling_pairs(chunks):
    by_parent: dict[str, list] = {}
    for c in chunks:
        if c.parent_id is not None:
            by_parent.setdefault(c.parent_id, []).append(c)
    pairs = set()
    for siblings in by_parent.values():
        siblings.sort(key=lambda c: c.chunk_index)
        pairs |= {(a.id, b.id) for a, b in zip(siblings, siblings[1:])}
    return pairs


def test_parent_child_sequence_edges_link_every_sibling_pair(store, hashing_embedder):
    graph = IngestGraphOptions(sequence_edges=True)
    ing = Ingestor(store, hashing_embedder, strategy="parent-child", parent_tokens=200, child_tokens=60, graph=graph)
    r = ing.ingest_text(LONG, "pc.txt")
    chunks = store.list_document_chunks(r.document_id)
    parents = {c.id for c in chunks if c.parent_id is None}
    expected = _sibling_pairs(chunks)
    assert len(expected) >= 8  # several parents with several children each
    seq = {(e.source_id, e.target_id) for e in store.get_edges([c.id for c in chunks]) if e.relation == RelationType.SEQUENCE}
    assert expected <= seq
    # a parent is never linked to a child, nor a child across parents
    assert all((s in parents) == (t in parents) for s, t in seq)
    assert seq - expected == {p for p in seq if p[0] in parents}

    # build_edges over the stored chunks gives the same links
    store.delete_document(r.document_id)
    plain = Ingestor(store, hashing_embedder, strategy="parent-child", parent_tokens=200, child_tokens=60)
    r = plain.ingest_text(LONG, "pc.txt")
    assert store.get_edges([c.id for c in store.list_document_chunks(r.document_id)]) == []
    Ingestor(store, hashing_embedder, graph=graph).build_edges([r.document_id])
    chunks = store.list_document_chunks(r.document_id)
    rebuilt = {(e.source_id, e.target_id) for e in store.get_edges([c.id for c in chunks])}
    assert _sibling_pairs(chunks) <= rebuilt


# --- 2 and 3. cross-document edges --------------------------------------------------------

SIMILAR = [
    "Graph databases store nodes and relationships.",
    "Graph databases store nodes and relationships too.",
    "Graph databases store nodes and their relationships.",
    "Graph databases keep nodes and relationships.",
]


def test_cross_document_batches_cover_every_candidate_pair(store, hashing_embedder):
    plain = Ingestor(store, hashing_embedder)
    docs = [plain.ingest_text(text, f"doc{i}.txt") for i, text in enumerate(SIMILAR)]
    source = docs[0].document_id
    pairs = store.similar_chunk_pairs(document_ids=[source], threshold=0.5, max_pairs=3)
    assert len(pairs) == 3  # one chunk of doc0, a candidate in each other document
    chat = ScriptedChat(link_first_two)
    ing = Ingestor(store, hashing_embedder, graph=IngestGraphOptions(graph_extraction=chat))
    stored = ing.extract_cross_document_edges(document_ids=[source], batch_size=2)
    assert all(len(p) <= 2 for p in chat.prompts)
    together = [set(p) for p in chat.prompts]
    for pair in pairs:
        assert any({pair.source.id, pair.target.id} <= ids for ids in together), pair
    assert stored == 3

    # the default batch of 5 chunks sends the same candidates in one call
    chat5 = ScriptedChat()
    Ingestor(store, hashing_embedder, graph=IngestGraphOptions(graph_extraction=chat5)).extract_cross_document_edges(
        document_ids=[source]
    )
    assert len(chat5.prompts) == 1 and len(chat5.prompts[0]) == 4


def test_cross_document_edges_are_discovered_during_ingest(store, hashing_embedder):
    chat = ScriptedChat(link_first_two)
    graph = IngestGraphOptions(graph_extraction=chat, cross_document_edges=True)
    ing = Ingestor(store, hashing_embedder, graph=graph)
    a = ing.ingest_text(SIMILAR[0], "a.txt")
    b = ing.ingest_text(SIMILAR[1], "b.txt")
    a_ids = [c.id for c in store.list_document_chunks(a.document_id)]
    b_ids = [c.id for c in store.list_document_chunks(b.document_id)]
    edges = [e for e in store.get_edges(a_ids + b_ids) if e.origin == "cross_document"]
    assert edges, "cross_document_edges=True must discover edges while ingesting"
    assert all({e.source_id, e.target_id} == {a_ids[0], b_ids[0]} for e in edges)
    assert b.edge_count >= 1


def test_cross_document_edges_need_a_model():
    with pytest.raises(ConfigurationError, match="graph_extraction"):
        IngestGraphOptions(cross_document_edges=True)


# --- 4. pruning over every edge source ----------------------------------------------------


def _outgoing(store, document_id):
    chunks = store.list_document_chunks(document_id)
    edges = store.get_edges([c.id for c in chunks])
    per_chunk: dict[str, list] = {c.id: [] for c in chunks}
    for e in edges:
        per_chunk[e.source_id].append(e)
    return per_chunk


@pytest.mark.parametrize("path", ["ingest", "build_edges"])
def test_max_edges_per_chunk_caps_similarity_edges_too(store, hashing_embedder, path):
    graph = IngestGraphOptions(
        sequence_edges=True,
        similarity_edges=True,
        similarity_threshold=0.1,
        similarity_top_k=5,
        max_edges_per_chunk=1,
    )
    chunker = RecursiveChunker(**ONE_PER_PARAGRAPH)
    if path == "ingest":
        r = Ingestor(store, hashing_embedder, graph=graph, chunker=chunker).ingest_text(VARIED, "cap.txt")
    else:
        r = Ingestor(store, hashing_embedder, chunker=chunker).ingest_text(VARIED, "cap.txt")
        Ingestor(store, hashing_embedder, graph=graph).build_edges([r.document_id])
    per_chunk = _outgoing(store, r.document_id)
    assert len(per_chunk) == 12
    assert max(len(v) for v in per_chunk.values()) == 1
    # the one kept is the heaviest: the sequence edge (weight 1.0) wherever there is one
    last = max(store.list_document_chunks(r.document_id), key=lambda c: c.chunk_index)
    assert all(v[0].relation == RelationType.SEQUENCE for cid, v in per_chunk.items() if cid != last.id)
    if path == "ingest":
        assert r.edge_count == sum(len(v) for v in per_chunk.values())


def test_min_edge_weight_drops_light_similarity_edges(store, hashing_embedder):
    graph = IngestGraphOptions(similarity_edges=True, similarity_threshold=0.1, similarity_top_k=5, min_edge_weight=0.5)
    chunker = RecursiveChunker(**ONE_PER_PARAGRAPH)
    loose = Ingestor(
        store,
        hashing_embedder,
        chunker=chunker,
        graph=IngestGraphOptions(similarity_edges=True, similarity_threshold=0.1, similarity_top_k=5),
    )
    r = loose.ingest_text(VARIED, "light.txt")
    weights = [e.weight for v in _outgoing(store, r.document_id).values() for e in v]
    assert min(weights) < 0.5  # the corpus does have light similarity edges
    store.delete_document(r.document_id)
    r = Ingestor(store, hashing_embedder, chunker=chunker, graph=graph).ingest_text(VARIED, "light.txt")
    weights = [e.weight for v in _outgoing(store, r.document_id).values() for e in v]
    assert len(weights) >= 12 and min(weights) >= 0.5


def test_pruning_leaves_edges_of_other_sources_alone(store, hashing_embedder):
    from kgrag_neo4j.types import ChunkEdge

    chunker = RecursiveChunker(**ONE_PER_PARAGRAPH)
    r = Ingestor(store, hashing_embedder, chunker=chunker).ingest_text(VARIED, "mine.txt")
    ids = [c.id for c in sorted(store.list_document_chunks(r.document_id), key=lambda c: c.chunk_index)]
    store.store_edges(
        [
            ChunkEdge(ids[0], ids[5], RelationType.REFERENCES, 0.2, origin="user"),
            ChunkEdge(ids[0], ids[6], RelationType.REFERENCES, 0.3, origin="user"),
        ]
    )
    graph = IngestGraphOptions(sequence_edges=True, similarity_edges=True, similarity_threshold=0.1, max_edges_per_chunk=1)
    Ingestor(store, hashing_embedder, graph=graph).build_edges([r.document_id])
    first = _outgoing(store, r.document_id)[ids[0]]
    assert sorted((e.origin, e.target_id) for e in first) == sorted([("sequence", ids[1]), ("user", ids[5]), ("user", ids[6])])


# --- 5. cancellation and tracing through the Ingestor -------------------------------------


def test_a_cancelled_ingestor_writes_nothing(store, hashing_embedder):
    from kgrag_neo4j.errors import Cancelled

    ing = Ingestor(store, hashing_embedder)
    ing.cancel()
    with pytest.raises(Cancelled):
        ing.ingest_text(LONG, "never.txt")
    assert store.list_documents() == []
    ing.reset_cancel()
    assert ing.ingest_text(LONG, "never.txt").status == "new"


def test_cancel_during_edge_extraction_keeps_the_document_and_sends_no_more_calls(store, hashing_embedder):
    event = threading.Event()

    def answer(ids):
        event.set()  # the user cancels while the first batch is with the model
        return link_first_two(ids)

    chat = ScriptedChat(answer)
    graph = IngestGraphOptions(graph_extraction=chat, graph_batch_size=2, graph_extraction_workers=1)
    ing = Ingestor(store, hashing_embedder, graph=graph, cancel=event, chunker=RecursiveChunker(max_tokens=80, overlap_tokens=0))
    r = ing.ingest_text(LONG, "cut.txt")
    assert r.cancelled and r.status == "new"
    assert len(chat.prompts) == 1
    chunks = store.list_document_chunks(r.document_id)
    assert len(chunks) > 4
    assert [(e.source_id, e.target_id) for e in store.get_edges([c.id for c in chunks])] == [tuple(chat.prompts[0])]
    # build_edges stops before the next document
    assert ing.build_edges()["documents"] == 0


def test_ingest_document_spans_with_a_callable_tracer(store, hashing_embedder):
    from kgrag_neo4j.errors import Cancelled

    events = []
    ing = Ingestor(
        store,
        hashing_embedder,
        tracer=lambda event, attrs: events.append((event, dict(attrs))),
        graph=IngestGraphOptions(sequence_edges=True),
    )
    r = ing.ingest_text(LONG, "traced.txt")
    assert [e for e, _ in events] == ["ingest.document.start", "ingest.document.end"]
    start, end = events[0][1], events[1][1]
    assert start["source"] == "traced.txt" and start["strategy"] == "flat"
    assert end["document_id"] == r.document_id and end["status"] == "new"
    assert end["chunk_count"] == r.chunk_count and end["edge_count"] == r.edge_count == r.chunk_count - 1
    assert end["duration_ms"] >= 0.0
    events.clear()
    ing.cancel()
    with pytest.raises(Cancelled):
        ing.ingest_text("other text", "other.txt")
    assert events[-1][0] == "ingest.document.end" and "Cancelled" in events[-1][1]["error"]
