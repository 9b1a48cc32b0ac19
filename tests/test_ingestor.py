"""The Ingestor against the real server: formats, strategies, idempotence, edges, bad input."""

from __future__ import annotations

import io
import json
import logging

import pytest

from kgrag_neo4j.errors import (
    DimensionMismatchError,
    ExtractionError,
    InputError,
    ProviderError,
    UnsupportedContentType,
)
from kgrag_neo4j.ingestion.ingestor import Ingestor
from kgrag_neo4j.options import IngestGraphOptions
from kgrag_neo4j.types import RelationType

from .conftest import TEST_DIMENSIONS


class CountingEmbedder:
    """Wraps the hashing embedder and counts calls (to prove re-ingest embeds nothing)."""

    def __init__(self, inner, *, fail=False, dims=None):
        self.inner, self.fail, self.calls = inner, fail, 0
        self.name = inner.name
        self.dimensions = dims or inner.dimensions

    def embed(self, texts, *, input_type="document"):
        self.calls += 1
        if self.fail:
            raise ProviderError("embedding service down")
        vectors = self.inner.embed(texts, input_type=input_type)
        return [v[: self.dimensions] if self.dimensions < len(v) else v for v in vectors]


class ScriptedChat:
    """A ChatProvider that answers with a function of the prompt."""

    def __init__(self, answer):
        self.answer, self.prompts = answer, []

    def chat(self, messages, *, json_schema=None):
        prompt = messages[-1]["content"]
        self.prompts.append(prompt)
        return self.answer(prompt)


def ids_in(prompt: str) -> list[str]:
    import re

    return re.findall(r"\[(chk_[0-9a-f]+)\]", prompt)


LONG = "\n\n".join(
    f"Paragraph {i} talks about topic {i % 3}. " + "It has several sentences with enough words to matter. " * 6 for i in range(12)
)


def test_ingest_text_then_again_is_unchanged_and_embeds_nothing(store, hashing_embedder, driver):
    emb = CountingEmbedder(hashing_embedder)
    ing = Ingestor(store, emb)
    first = ing.ingest_text(LONG, "notes/long.txt", "Long")
    assert first.status == "new" and first.chunk_count > 1
    calls = emb.calls
    again = ing.ingest_text(LONG, "notes/long.txt", "Long")
    assert (again.status, again.chunk_count, again.document_id) == ("unchanged", first.chunk_count, first.document_id)
    assert emb.calls == calls
    changed = ing.ingest_text(LONG + "\n\nA new closing paragraph.", "notes/long.txt", "Long")
    assert changed.status == "replaced"
    assert len(store.list_documents()) == 1
    chunks = store.list_document_chunks(first.document_id)
    assert chunks[-1].content.endswith("A new closing paragraph.")
    assert all(c.token_count <= 512 for c in chunks)


def test_markdown_keeps_heading_paths_and_strips_formatting(store, hashing_embedder, tmp_path):
    md = tmp_path / "guide.md"
    md.write_text("# Guide\n\nIntro **bold** text.\n\n## Setup\n\nRun `make demo` and see [docs](http://x).\n")
    r = Ingestor(store, hashing_embedder).ingest_file(md)
    chunks = store.list_document_chunks(r.document_id)
    setup = [c for c in chunks if "make demo" in c.content]
    assert setup and setup[0].metadata.get("section_heading") == "Setup"
    assert "**" not in " ".join(c.content for c in chunks) and "](" not in " ".join(c.content for c in chunks)
    assert store.get_document(r.document_id).title == "guide.md"


def test_markdown_is_converted_once_per_file(store, hashing_embedder, tmp_path, monkeypatch):
    """A Markdown file's text without formatting (the document's content) is made once, where
    the file is read: the extractor's conversion is not thrown away and redone at chunking."""
    from kgrag_neo4j.ingestion import chunking
    from kgrag_neo4j.ingestion import ingestor as ingestor_module
    from kgrag_neo4j.ingestion.extractors import markdown as extractors

    calls = []
    real = extractors.markdown_to_text

    def counting(text):
        calls.append(text)
        return real(text)

    monkeypatch.setattr(extractors, "markdown_to_text", counting)
    monkeypatch.setattr(ingestor_module, "markdown_to_text", counting)
    monkeypatch.setattr(chunking, "markdown_to_text", counting)
    paths = []
    for i in range(3):
        md = tmp_path / f"note{i}.md"
        md.write_text(f"# Note {i}\n\nSome **bold** words about topic {i}.\n\n## Details\n\nMore text {i}.\n")
        paths.append(md)
    ingestor = Ingestor(store, hashing_embedder)
    first = ingestor.ingest_file(paths[0])
    assert len(calls) == 1
    results = ingestor.ingest_paths(paths[1:])
    assert all(r.ok for r in results) and len(calls) == 3
    # a folder run does not hold every document's text until it ends
    assert all(r.result is not None and r.result.document is None and r.result.document_id for r in results)
    document = store.get_document(first.document_id)
    assert "**" not in document.content and "Some bold words about topic 0." in document.content
    # an empty Markdown file is refused as the extractor refuses it
    empty = tmp_path / "empty.md"
    empty.write_text("#\n\n---\n")
    with pytest.raises(ExtractionError, match="Markdown is empty"):
        ingestor.ingest_file(empty)


def test_html_and_content_type_override(store, hashing_embedder, tmp_path):
    page = tmp_path / "page.html"
    page.write_text(
        "<html><head><script>evil()</script><style>p{}</style></head><body><h1>Title</h1><p>Caf&eacute; menu</p></body></html>"
    )
    r = Ingestor(store, hashing_embedder).ingest_file(page)
    text = " ".join(c.content for c in store.list_document_chunks(r.document_id))
    assert "Café menu" in text and "evil" not in text and "p{}" not in text
    raw = tmp_path / "page.data"
    raw.write_text("<p>typed by hand</p>")
    r2 = Ingestor(store, hashing_embedder).ingest_file(raw, content_type="text/html")
    assert store.list_document_chunks(r2.document_id)[0].content == "typed by hand"


def test_pdf(store, hashing_embedder, tmp_path):
    pypdf = pytest.importorskip("pypdf")  # the pdf extra is part of the dev install
    from tests.test_extractors import make_pdf

    path = tmp_path / "paper.pdf"
    path.write_bytes(make_pdf([["Neo4j stores graphs"]]))
    r = Ingestor(store, hashing_embedder).ingest_file(path)
    assert "Neo4j stores graphs" in store.list_document_chunks(r.document_id)[0].content
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4 this is not a pdf")
    with pytest.raises(ExtractionError):
        Ingestor(store, hashing_embedder).ingest_file(broken)
    del pypdf


def test_ingest_reader_streams_and_refuses_oversize(store, hashing_embedder):
    from kgrag_neo4j.ingestion.extractors import ExtractorRegistry

    r = Ingestor(store, hashing_embedder).ingest_reader(io.BytesIO(b"streamed text body"), "s.txt")
    assert r.status == "new"
    small = Ingestor(store, hashing_embedder, extractors=ExtractorRegistry.default(max_bytes=10))
    with pytest.raises(InputError, match="limit"):
        small.ingest_reader(io.BytesIO(b"x" * 100), "big.txt")


def test_parent_child_strategy(store, hashing_embedder, driver):
    r = Ingestor(store, hashing_embedder, strategy="parent-child", parent_tokens=200, child_tokens=60).ingest_text(LONG, "pc.txt")
    chunks = store.list_document_chunks(r.document_id, with_embedding=True)
    parents = [c for c in chunks if c.parent_id is None]
    children = [c for c in chunks if c.parent_id is not None]
    assert parents and children and len(children) > len(parents)
    assert all(p.embedding is None for p in parents)
    assert all(c.embedding is not None and len(c.embedding) == TEST_DIMENSIONS for c in children)
    assert {c.parent_id for c in children} <= {p.id for p in parents}
    records, _, _ = driver.execute_query(
        "MATCH (:Chunk {document_id: $d})-[r:CHILD_OF]->() RETURN count(r) AS n", d=r.document_id
    )
    assert records[0]["n"] == len(children)


@pytest.mark.parametrize(
    "name, content, error",
    [
        ("empty.txt", b"", ExtractionError),
        ("blank.txt", b"   \n\n  ", ExtractionError),
        ("binary.txt", bytes(range(256)) * 4, ExtractionError),
        ("latin1.txt", "café".encode("latin-1"), ExtractionError),
        ("data.xyz", b"some text", UnsupportedContentType),
    ],
)
def test_bad_files_are_refused_and_nothing_is_written(store, hashing_embedder, tmp_path, name, content, error):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(error):
        Ingestor(store, hashing_embedder).ingest_file(path)
    assert store.list_documents() == []


def test_embedder_of_the_wrong_size_is_refused_before_writing(store, hashing_embedder):
    # the namespace's size is recorded (a namespace with nothing recorded takes any size)
    store.init_schema(TEST_DIMENSIONS, model="unknown")
    wrong = CountingEmbedder(hashing_embedder, dims=64)
    with pytest.raises(DimensionMismatchError, match=f"{TEST_DIMENSIONS}"):
        Ingestor(store, wrong).ingest_text("some text", "w.txt")
    assert store.list_documents() == []


def test_embedding_failure_stores_nothing_or_unembedded_chunks(store, hashing_embedder, caplog):
    failing = CountingEmbedder(hashing_embedder, fail=True)
    with pytest.raises(ProviderError):
        Ingestor(store, failing).ingest_text("text about graphs", "f.txt")
    assert store.list_documents() == []
    with caplog.at_level(logging.WARNING):
        r = Ingestor(store, failing, embedding_failure="store_unembedded").ingest_text("text about graphs", "f.txt")
    assert r.status == "new" and r.skipped and "embedding failed" in caplog.text
    assert [x.content for x in store.search_chunks_keyword("graphs", 3)] == ["text about graphs"]


def test_sequence_and_similarity_edges_at_ingest(store, hashing_embedder):
    graph = IngestGraphOptions(sequence_edges=True, similarity_edges=True, similarity_threshold=0.2, similarity_top_k=2)
    r = Ingestor(store, hashing_embedder, graph=graph, chunker=None).ingest_text(LONG, "edges.txt")
    chunks = store.list_document_chunks(r.document_id)
    edges = store.get_edges([c.id for c in chunks])
    seq = [e for e in edges if e.relation == RelationType.SEQUENCE]
    assert len(seq) == len(chunks) - 1 and all(e.weight == 1.0 for e in seq)
    assert any(e.relation == RelationType.SIMILAR_TO for e in edges)
    assert r.edge_count == len(edges)


def test_graph_options_are_validated_once_per_ingest(store, hashing_embedder, monkeypatch, tmp_path):
    """The graph options are checked when they are made, and the pipeline uses them as they
    are: no copies with an edge source switched off (each copy validated again)."""
    checks = []
    real = IngestGraphOptions.__post_init__

    def counting(self):
        checks.append(self)
        real(self)

    monkeypatch.setattr(IngestGraphOptions, "__post_init__", counting)
    graph = IngestGraphOptions(sequence_edges=True, similarity_edges=True, similarity_threshold=0.2, similarity_top_k=2)
    assert len(checks) == 1
    ingestor = Ingestor(store, hashing_embedder, graph=graph, batch_size=8)
    ingestor.ingest_text(LONG, "once.txt")
    for i in range(2):
        (tmp_path / f"f{i}.txt").write_text(LONG.replace("Paragraph", f"File {i} paragraph"))
    assert all(r.ok for r in ingestor.ingest_paths(sorted(tmp_path.iterdir())))
    ingestor.build_edges()
    assert len(checks) == 1 and ingestor.options.graph is graph


def test_llm_edges_validated_and_failing_batches_skipped(store, hashing_embedder, caplog):
    def answer(prompt):
        ids = ids_in(prompt)
        if "Section 3." in prompt:
            raise ProviderError("model overloaded")
        return json.dumps(
            {
                "edges": [
                    {"source": ids[1], "target": ids[0], "relation": "elaborates", "weight": 0.9, "description": "more detail"},
                    {"source": ids[0], "target": ids[0], "relation": "elaborates", "weight": 0.9},  # self edge
                    {"source": ids[0], "target": "chk_unknown", "relation": "references", "weight": 0.5},  # not in batch
                    {"source": ids[2], "target": ids[1], "relation": "friend_of", "weight": 0.5},  # unknown relation
                    {"source": ids[2], "target": ids[0], "relation": "depends_on", "weight": 1.5},  # out of range
                ]
            }
        )

    chat = ScriptedChat(answer)
    graph = IngestGraphOptions(graph_extraction=chat, graph_batch_size=3, graph_extraction_workers=2)
    text = "\n\n".join(f"Section {i}. " + "Words about the section. " * 30 for i in range(7))
    from kgrag_neo4j.ingestion.chunkers import RecursiveChunker

    with caplog.at_level(logging.WARNING):
        r = Ingestor(
            store, hashing_embedder, graph=graph, chunker=RecursiveChunker(max_tokens=200, overlap_tokens=0)
        ).ingest_text(text, "llm.txt")
    chunks = store.list_document_chunks(r.document_id)
    edges = store.get_edges([c.id for c in chunks])
    assert len(chat.prompts) >= 2
    failed = [ids_in(p) for p in chat.prompts if "Section 3." in p]
    kept = [ids_in(p) for p in chat.prompts if "Section 3." not in p]
    # one edge per answered batch survives validation; the failing batch is skipped
    assert {(e.source_id, e.target_id) for e in edges} == {(ids[1], ids[0]) for ids in kept}
    assert all((e.relation, e.weight, e.description) == (RelationType.ELABORATES, 0.9, "more detail") for e in edges)
    assert failed and "overloaded" in caplog.text


def test_cross_document_edges(store, hashing_embedder):
    ing = Ingestor(store, hashing_embedder)
    a = ing.ingest_text("Graph databases store nodes and relationships.", "a.txt")
    b = ing.ingest_text("Graph databases store nodes and relationships too.", "b.txt")
    chat = ScriptedChat(
        lambda p: json.dumps(
            {
                "edges": [
                    {
                        "source": ids_in(p)[0],
                        "target": ids_in(p)[1],
                        "relation": "similar_to",
                        "weight": 0.8,
                        "description": "same idea",
                    }
                ]
            }
        )
    )
    cross = Ingestor(store, hashing_embedder, graph=IngestGraphOptions(graph_extraction=chat))
    count = cross.extract_cross_document_edges(similarity_threshold=0.5)
    assert count >= 1
    all_ids = [c.id for c in store.list_document_chunks(a.document_id) + store.list_document_chunks(b.document_id)]
    edges = store.get_edges(all_ids)
    docs = {c.id: c.document_id for c in store.get_chunks_by_ids(all_ids)}
    assert edges and all(docs[e.source_id] != docs[e.target_id] and e.origin == "cross_document" for e in edges)
