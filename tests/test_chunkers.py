"""Sentence splitting and the three chunkers. Pure: no DB, no model (fake embed functions)."""

from __future__ import annotations

import hashlib
import logging
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgrag_neo4j.errors import ConfigurationError, InputError, KgragError
from kgrag_neo4j.ingestion import (
    Chunker,
    ChunkPiece,
    MarkdownChunker,
    RecursiveChunker,
    SemanticChunker,
    estimate_tokens,
    markdown_to_text,
    split_sentences,
)
from kgrag_neo4j.ingestion.chunkers import SENTENCE_BOUNDARY, consecutive_cosines, percentile

# --------------------------------------------------------------------------- sentences


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("One. Two. Three.", ["One.", "Two.", "Three."]),
        ("Is it? Yes! Good.", ["Is it?", "Yes!", "Good."]),
        ("Really?! Wait... what?", ["Really?!", "Wait...", "what?"]),
        ("Mr. Smith met Dr. Jones. They talked.", ["Mr. Smith met Dr. Jones.", "They talked."]),
        ("Mrs. Ms. Prof. St. names. End.", ["Mrs. Ms. Prof. St. names.", "End."]),
        ("Cats vs. dogs is old. New topic.", ["Cats vs. dogs is old.", "New topic."]),
        ("Bring pens, paper, etc. to class. Then sit.", ["Bring pens, paper, etc. to class.", "Then sit."]),
        ("Fruit, e.g. apples, i.e. food. Next.", ["Fruit, e.g. apples, i.e. food.", "Next."]),
        ("Use E.G. caps too. Ok.", ["Use E.G. caps too.", "Ok."]),
        ("The U.S. economy grew. Prices rose.", ["The U.S. economy grew.", "Prices rose."]),
        ("J. R. R. Tolkien wrote. Others read.", ["J. R. R. Tolkien wrote.", "Others read."]),
        ("Pi is 3.14 roughly. Next.", ["Pi is 3.14 roughly.", "Next."]),
        ("It costs $1.50 today. Tomorrow $2.", ["It costs $1.50 today.", "Tomorrow $2."]),
        ("The total was $1.50. Then more.", ["The total was $1.50.", "Then more."]),
        ("Version 2.0.1 shipped. Done.", ["Version 2.0.1 shipped.", "Done."]),
        ('He said "Stop." Then left.', ['He said "Stop."', "Then left."]),
        ("(A full aside.) Next one.", ["(A full aside.)", "Next one."]),
        ("你好。世界！真的吗？是的。", ["你好。", "世界！", "真的吗？", "是的。"]),
        ("「好。」他说。", ["「好。」", "他说。"]),
        ("真的？！是的。", ["真的？！", "是的。"]),
        ("日本語です。 Then English. End.", ["日本語です。", "Then English.", "End."]),
        ("1. First item\n2. Second item", ["1. First item\n2. Second item"]),
        ("Line one.\nLine two.", ["Line one.", "Line two."]),
        ("no terminal punctuation", ["no terminal punctuation"]),
        ("   ", []),
        ("", []),
    ],
)
def test_split_sentences(text: str, sentences: list[str]) -> None:
    assert split_sentences(text) == sentences


@given(st.text(max_size=300))
def test_split_sentences_loses_nothing_but_whitespace(text: str) -> None:
    sentences = split_sentences(text)
    assert all(s == s.strip() and s for s in sentences)
    assert "".join("".join(sentences).split()) == "".join(text.split())


# --------------------------------------------------------------------------- recursive


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"max_tokens": 0}, "max_tokens must be at least 1"),
        ({"max_tokens": -5}, "max_tokens must be at least 1"),
        ({"max_tokens": 10, "overlap_tokens": 10}, "overlap_tokens must be between 0 and max_tokens - 1"),
        ({"max_tokens": 10, "overlap_tokens": -1}, "overlap_tokens must be between"),
        ({"max_tokens": 40}, "overlap_tokens must be between 0 and max_tokens - 1 \\(39\\), got 50"),
        ({"max_tokens": 1.5}, "max_tokens must be an integer"),
        ({"max_tokens": True}, "max_tokens must be an integer"),
        ({"overlap_tokens": "5"}, "overlap_tokens must be an integer"),
    ],
)
@pytest.mark.parametrize("chunker", [RecursiveChunker, MarkdownChunker])
def test_chunk_budget_is_validated(chunker: type, kwargs: dict, fragment: str) -> None:
    with pytest.raises(ConfigurationError, match=fragment):
        chunker(**kwargs)


@pytest.mark.parametrize("text", ["", "   ", "\n\n\t"])
@pytest.mark.parametrize(
    "chunker", [RecursiveChunker(), MarkdownChunker(), SemanticChunker(lambda s: [[1.0]] * len(s))], ids=repr
)
def test_blank_text_gives_no_chunks(chunker: Chunker, text: str) -> None:
    assert chunker.chunk(text) == []


@pytest.mark.parametrize(
    "chunker", [RecursiveChunker(), MarkdownChunker(), SemanticChunker(lambda s: [[1.0]] * len(s))], ids=repr
)
def test_chunkers_refuse_non_text(chunker: Chunker) -> None:
    assert isinstance(chunker, Chunker)
    with pytest.raises(InputError, match="must be str, got bytes"):
        chunker.chunk(b"bytes")  # type: ignore[arg-type]


def test_short_text_is_one_stripped_chunk() -> None:
    assert RecursiveChunker().chunk("  Just one line.\n") == [ChunkPiece("Just one line.")]


_PIECES = st.sampled_from(
    ["word", "Word.", "x", " ", "  ", "\n", "\n\n", " \n \n ", "\t", "e.g.", "3.14", "Dr.", "?", "é", "\u00a0"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=400), st.sampled_from([(8, 2), (30, 10), (512, 50)]))
def test_a_text_under_the_size_is_what_the_splitter_returns(pieces: list[str], budget: tuple[int, int]) -> None:
    # RecursiveChunker answers a text under its size without langchain: the same as langchain
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    text = "".join(pieces)
    chunker = RecursiveChunker(max_tokens=budget[0], overlap_tokens=budget[1])
    if not text.strip() or len(text) >= chunker._chunk_chars:
        return
    splitter = RecursiveCharacterTextSplitter(
        separators=[r"\n[^\S\n]*\n\s*", r"\n", SENTENCE_BOUNDARY, r"\s+", ""],
        is_separator_regex=True,
        keep_separator="end",
        chunk_size=chunker._chunk_chars,
        chunk_overlap=budget[1] * 4,
        length_function=len,
        strip_whitespace=True,
    )
    assert [p.content for p in chunker.chunk(text)] == splitter.split_text(text)


def test_a_folder_of_short_texts_never_imports_langchain() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from kgrag_neo4j.ingestion import RecursiveChunker; "
        "print(RecursiveChunker().chunk('A short paragraph. Two sentences.')[0].content, "
        "'langchain_text_splitters' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["A", "short", "paragraph.", "Two", "sentences.", "False"]


def _prose(sentences: int, *, seed: int = 0, paragraph_every: int = 0) -> str:
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda".split()
    out = []
    for i in range(sentences):
        n = 4 + (i * 7 + seed) % 9
        sentence = " ".join(words[(i * 3 + j + seed) % len(words)] for j in range(n))
        out.append(sentence.capitalize() + ".")
        if paragraph_every and (i + 1) % paragraph_every == 0:
            out.append("\n\n")
    return re.sub(r" ?\n\n ?", "\n\n", " ".join(out)).strip()


@pytest.mark.parametrize(("max_tokens", "overlap"), [(30, 10), (60, 20), (100, 0), (512, 50)])
def test_recursive_chunks_end_at_sentence_boundaries(max_tokens: int, overlap: int) -> None:
    text = _prose(200, paragraph_every=7)
    pieces = RecursiveChunker(max_tokens=max_tokens, overlap_tokens=overlap).chunk(text)
    assert len(pieces) > 1
    for piece in pieces:
        assert piece.token_count <= max_tokens
        assert piece.content.endswith(".")
        assert piece.content in text
        assert piece.metadata == {}


@pytest.mark.parametrize(("max_tokens", "overlap"), [(30, 10), (60, 20), (80, 30)])
def test_consecutive_recursive_chunks_overlap(max_tokens: int, overlap: int) -> None:
    text = " ".join(f"Sentence {i} is short." for i in range(200))
    pieces = [p.content for p in RecursiveChunker(max_tokens=max_tokens, overlap_tokens=overlap).chunk(text)]
    assert len(pieces) > 2
    for before, after in zip(pieces, pieces[1:]):
        shared = max(k for k in range(len(after) + 1) if before.endswith(after[:k]))
        # What is shared is whole sentences, and no more than the overlap budget.
        assert shared > 0 and after[:shared].endswith(".")
        assert estimate_tokens(after[:shared]) <= overlap
        assert before != after
    numbers = [int(n) for p in pieces for n in re.findall(r"Sentence (\d+)", p)]
    assert sorted(set(numbers)) == list(range(200)) and len(numbers) > 200


def test_no_overlap_when_disabled() -> None:
    text = _prose(120)
    pieces = [p.content for p in RecursiveChunker(max_tokens=40, overlap_tokens=0).chunk(text)]
    assert " ".join(pieces) == text


def test_abbreviations_and_decimals_are_never_chunk_ends() -> None:
    sentence = "Dr. Ray paid $1.50 vs. Mr. Lee who paid 3.14 e.g. coins etc. at noon."
    text = " ".join([sentence] * 30)
    pieces = RecursiveChunker(max_tokens=40, overlap_tokens=0).chunk(text)
    assert len(pieces) > 1
    for piece in pieces:
        assert piece.content.startswith("Dr. Ray") and piece.content.endswith("at noon.")
        assert piece.content.count("Dr. Ray") == piece.content.count("at noon.")


def test_cjk_text_is_cut_after_full_stops() -> None:
    text = "".join(f"这是第{i}个句子，内容比较长一些。" for i in range(60))
    pieces = RecursiveChunker(max_tokens=20, overlap_tokens=0).chunk(text)
    assert len(pieces) > 1
    assert all(p.content.endswith("。") and p.token_count <= 20 for p in pieces)
    assert "".join(p.content for p in pieces) == text


def test_a_word_longer_than_the_budget_is_cut_into_characters() -> None:
    word = "x" * 1000
    pieces = RecursiveChunker(max_tokens=16, overlap_tokens=0).chunk(f"short start. {word} end.")
    assert all(p.token_count <= 16 for p in pieces)
    assert "".join(p.content for p in pieces if set(p.content) == {"x"}) == word


def test_recursive_chunker_is_deterministic() -> None:
    text = _prose(300, seed=3, paragraph_every=5)
    chunker = RecursiveChunker(max_tokens=50, overlap_tokens=10)
    assert chunker.chunk(text) == chunker.chunk(text) == RecursiveChunker(max_tokens=50, overlap_tokens=10).chunk(text)


_budgets = st.integers(min_value=1, max_value=80).flatmap(
    lambda m: st.tuples(st.just(m), st.integers(min_value=0, max_value=m - 1))
)


@settings(max_examples=150, deadline=None)
@given(text=st.text(max_size=1500), budget=_budgets)
def test_recursive_chunks_fit_and_come_from_the_text(text: str, budget: tuple[int, int]) -> None:
    max_tokens, overlap = budget
    pieces = RecursiveChunker(max_tokens=max_tokens, overlap_tokens=overlap).chunk(text)
    for piece in pieces:
        assert piece.token_count <= max_tokens
        assert piece.content and piece.content == piece.content.strip()
        assert piece.content in text
    if text.strip():
        assert pieces


_words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=12)
_sentences = st.lists(_words, min_size=1, max_size=15).map(lambda ws: " ".join(ws).capitalize() + ".")
_paragraphs = st.lists(_sentences, min_size=1, max_size=8).map(" ".join)
_documents = st.lists(_paragraphs, min_size=1, max_size=6).map("\n\n".join)


@settings(max_examples=100, deadline=None)
@given(text=_documents, budget=_budgets)
def test_recursive_chunks_cover_every_word(text: str, budget: tuple[int, int]) -> None:
    max_tokens, overlap = budget
    pieces = RecursiveChunker(max_tokens=max_tokens, overlap_tokens=overlap).chunk(text)
    covered = " ".join(p.content for p in pieces)
    for word in re.findall(r"\S+", text):
        if estimate_tokens(word + " ") < max_tokens:  # smaller words are never cut
            assert word in covered
    assert set("".join(covered.split())) == set("".join(text.split()))


# --------------------------------------------------------------------------- markdown

_GUIDE = """\
Some preamble before any heading.

# Guide

## Setup

Install it with `pip install kgrag`.

```python
def main():
    # comment, not a heading
    return 1
```

## Usage

Call **main** and read the [docs](https://example.com).

### Details

Deeper text.

# Appendix

Last words.
"""


def test_markdown_sections_carry_their_heading_path() -> None:
    pieces = MarkdownChunker().chunk(_GUIDE)
    assert [p.metadata for p in pieces] == [
        {"headings": [], "section_heading": None},
        {"headings": ["Guide", "Setup"], "section_heading": "Setup"},
        {"headings": ["Guide", "Usage"], "section_heading": "Usage"},
        {"headings": ["Guide", "Usage", "Details"], "section_heading": "Details"},
        {"headings": ["Appendix"], "section_heading": "Appendix"},
    ]
    assert [p.content for p in pieces] == [
        "Some preamble before any heading.",
        "Guide\n\nSetup\n\nInstall it with pip install kgrag.\n\ndef main():\n    # comment, not a heading\n    return 1",
        "Usage\n\nCall main and read the docs.",
        "Details\n\nDeeper text.",
        "Appendix\n\nLast words.",
    ]


@pytest.mark.parametrize(
    ("markdown", "headings"),
    [
        ("# A\ntext", [["A"]]),
        ("# A\n## B\ntext\n## C\ntext", [["A", "B"], ["A", "C"]]),
        ("## Starts deep\ntext\n# Top\ntext", [["Starts deep"], ["Top"]]),
        ("# A\n### Skips a level\ntext\n## B\ntext", [["A", "Skips a level"], ["A", "B"]]),
        ("Setext Title\n============\ntext\n\nSub\n---\ntext", [["Setext Title"], ["Setext Title", "Sub"]]),
        ("Two line\nsetext\n---\ntext", [["Two line setext"]]),
        ("# **Bold** `code` [link](x)\ntext", [["Bold code link"]]),
        ("# Empty section\n# Next\ntext", [["Empty section"], ["Next"]]),
        ("#### Deep 4\n##### Deep 5\n###### Deep 6\ntext", [["Deep 4", "Deep 5", "Deep 6"]]),
        ("~~~\n# fenced\n~~~\n#notaheading", [[]]),
    ],
)
def test_markdown_heading_paths(markdown: str, headings: list[list[str]]) -> None:
    assert [p.metadata["headings"] for p in MarkdownChunker().chunk(markdown)] == headings


def test_markdown_chunk_text_equals_the_stripped_section() -> None:
    section = "## Setup\n\n- **one**\n- two\n\n> quoted"
    [piece] = MarkdownChunker().chunk(section)
    assert piece.content == markdown_to_text(section) == "Setup\n\none\ntwo\n\nquoted"


def test_oversized_markdown_section_falls_back_and_repeats_the_heading() -> None:
    body = " ".join(f"Sentence number {i} talks about setup." for i in range(80))
    markdown = f"# Guide\n\n## Setup\n\n{body}\n\n## Next\n\nShort."
    pieces = MarkdownChunker(max_tokens=60, overlap_tokens=10).chunk(markdown)
    setup = [p for p in pieces if p.metadata["section_heading"] == "Setup"]
    assert len(setup) > 3
    for piece in setup:
        assert piece.token_count <= 60
        assert piece.content.startswith("Guide\n\nSetup\n\nSentence number")
        assert piece.metadata == {"headings": ["Guide", "Setup"], "section_heading": "Setup"}
    numbers = [int(n) for p in setup for n in re.findall(r"number (\d+)", p.content)]
    assert set(numbers) == set(range(80))
    assert pieces[-1].content == "Next\n\nShort."


def test_markdown_chunk_metadata_is_not_shared() -> None:
    body = " ".join(f"Sentence {i} here." for i in range(100))
    pieces = MarkdownChunker(max_tokens=40, overlap_tokens=0).chunk(f"# T\n\n{body}")
    pieces[0].metadata["headings"].append("mutated")
    assert pieces[1].metadata["headings"] == ["T"]


def test_markdown_section_with_a_huge_heading_still_fits() -> None:
    markdown = "# " + "very long heading " * 20 + "\n\n" + "Body sentence here. " * 50
    pieces = MarkdownChunker(max_tokens=30, overlap_tokens=5).chunk(markdown)
    assert all(p.token_count <= 30 for p in pieces)


_markdownish = st.text(alphabet=st.sampled_from(list("#=-*_`~>|[]()!<>/ \n\tabc.1")) | st.characters(), max_size=800)


@settings(max_examples=150, deadline=None)
@given(text=_markdownish, budget=_budgets)
def test_markdown_chunks_fit_for_any_text(text: str, budget: tuple[int, int]) -> None:
    max_tokens, overlap = budget
    pieces = MarkdownChunker(max_tokens=max_tokens, overlap_tokens=overlap).chunk(text)
    for piece in pieces:
        assert piece.token_count <= max_tokens
        assert piece.content == piece.content.strip() and piece.content
        assert set(piece.metadata) == {"headings", "section_heading"}


# --------------------------------------------------------------------------- semantic

_CATS = [
    "Cats purr when they are content and relaxed.",
    "Many cats sleep for most of the afternoon.",
    "A cat grooms its fur with a rough tongue.",
    "Kittens learn to hunt by playing with their siblings.",
]
_MARKETS = [
    "Stock markets fell sharply after the rate decision.",
    "Bond yields climbed as investors sold government debt.",
    "The central bank signalled further increases this year.",
    "Currency traders moved money into the dollar.",
]


def _topic_embed(calls: list[list[str]]):
    """Sentences about cats point one way, about markets another, each with a small twist."""

    def embed(sentences: list[str]) -> list[list[float]]:
        calls.append(list(sentences))
        vectors = []
        for i, sentence in enumerate(sentences):
            catty = any(w in sentence.lower() for w in ("cat", "kitten"))
            base = [1.0, 0.0, 0.0] if catty else [0.0, 1.0, 0.0]
            base[2] = 0.05 * (i % 3)
            vectors.append(base)
        return vectors

    return embed


def test_semantic_chunker_splits_at_the_topic_change() -> None:
    calls: list[list[str]] = []
    text = " ".join(_CATS + _MARKETS)
    chunker = SemanticChunker(_topic_embed(calls), max_tokens=60, overlap_tokens=10)
    pieces = chunker.chunk(text)
    assert [p.content for p in pieces] == [" ".join(_CATS), " ".join(_MARKETS)]
    assert calls == [_CATS + _MARKETS]
    assert all(p.token_count <= 60 for p in pieces)


def test_semantic_chunker_keeps_paragraph_breaks_inside_a_group() -> None:
    text = " ".join(_CATS[:2]) + "\n\n" + " ".join(_CATS[2:]) + "\n\n" + " ".join(_MARKETS)
    pieces = SemanticChunker(_topic_embed([]), max_tokens=60, overlap_tokens=10).chunk(text)
    assert [p.content for p in pieces] == [
        " ".join(_CATS[:2]) + "\n\n" + " ".join(_CATS[2:]),
        " ".join(_MARKETS),
    ]


def test_semantic_chunker_returns_short_text_whole_without_embedding() -> None:
    calls: list[list[str]] = []
    pieces = SemanticChunker(_topic_embed(calls)).chunk(" ".join(_CATS + _MARKETS))
    assert [p.content for p in pieces] == [" ".join(_CATS + _MARKETS)]
    assert calls == []


def test_semantic_groups_over_the_budget_are_split_recursively() -> None:
    text = " ".join(_CATS * 6 + _MARKETS)
    pieces = SemanticChunker(_topic_embed([]), max_tokens=40, overlap_tokens=5).chunk(text)
    assert len(pieces) > 2 and all(p.token_count <= 40 for p in pieces)
    assert all(any(m in p.content for p in pieces) for m in _MARKETS)
    for piece in pieces:
        assert not (any(c in piece.content for c in _CATS) and any(m in piece.content for m in _MARKETS))


def _broken_embed(sentences: list[str]) -> list[list[float]]:
    raise RuntimeError("provider down")


@pytest.mark.parametrize(
    ("embed_fn", "logged"),
    [
        (_broken_embed, "RuntimeError: provider down"),
        (lambda s: [[1.0, 0.0]] * (len(s) - 1), "shape"),
        (lambda s: [[1.0, float("nan")]] * len(s), "NaN"),
        (lambda s: [[1.0], [1.0, 2.0]] * len(s), "not vectors"),
        (lambda s: None, "shape"),
    ],
)
def test_semantic_chunker_falls_back_to_recursive(embed_fn, logged: str, caplog: pytest.LogCaptureFixture) -> None:
    text = " ".join(_CATS + _MARKETS) * 3
    with caplog.at_level(logging.WARNING, logger="kgrag_neo4j.ingestion.chunkers"):
        pieces = SemanticChunker(embed_fn, max_tokens=50, overlap_tokens=10).chunk(text)
    assert pieces == RecursiveChunker(max_tokens=50, overlap_tokens=10).chunk(text)
    assert any("fell back" in r.getMessage() and logged in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"breakpoint_percentile": -1}, "breakpoint_percentile"),
        ({"breakpoint_percentile": 101}, "breakpoint_percentile"),
        ({"breakpoint_percentile": "25"}, "breakpoint_percentile"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"max_tokens": 20}, "overlap_tokens"),
    ],
)
def test_semantic_options_are_validated(kwargs: dict, fragment: str) -> None:
    with pytest.raises(ConfigurationError, match=fragment):
        SemanticChunker(_broken_embed, **kwargs)


def test_semantic_embed_fn_must_be_callable() -> None:
    with pytest.raises(ConfigurationError, match="callable"):
        SemanticChunker("not a function")  # type: ignore[arg-type]


def _hash_embed(sentences: list[str]) -> list[list[float]]:
    return [[b - 128.0 for b in hashlib.sha256(s.encode()).digest()[:8]] for s in sentences]


@settings(max_examples=100, deadline=None)
@given(
    text=st.one_of(st.text(max_size=1200), _documents),
    budget=_budgets,
    q=st.floats(min_value=0, max_value=100),
)
def test_semantic_chunks_fit_for_any_text(text: str, budget: tuple[int, int], q: float) -> None:
    max_tokens, overlap = budget
    chunker = SemanticChunker(_hash_embed, max_tokens=max_tokens, overlap_tokens=overlap, breakpoint_percentile=q)
    pieces = chunker.chunk(text)
    assert pieces == chunker.chunk(text)
    for piece in pieces:
        assert piece.token_count <= max_tokens
        assert piece.content and piece.content == piece.content.strip()
    assert set("".join(text.split())) == set("".join("".join(p.content for p in pieces).split()))


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [
        ([1.0], 25, 1.0),
        ([0.0, 1.0], 50, 0.5),
        ([3.0, 1.0, 2.0], 0, 1.0),
        ([3.0, 1.0, 2.0], 100, 3.0),
        ([0.0, 1.0, 1.0, 1.0, 1.0], 25, 1.0),
        ([0.1, 0.2, 0.9, 0.95], 25, 0.175),
    ],
)
def test_percentile_table(values: list[float], q: float, expected: float) -> None:
    assert percentile(values, q) == pytest.approx(expected)


@given(st.lists(st.floats(min_value=-1, max_value=1), min_size=1, max_size=50), st.floats(min_value=0, max_value=100))
def test_percentile_matches_numpy(values: list[float], q: float) -> None:
    assert percentile(values, q) == pytest.approx(float(np.percentile(values, q)), abs=1e-12)


@pytest.mark.parametrize(
    ("vectors", "expected"),
    [
        ([[1, 0], [1, 0], [0, 1]], [1.0, 0.0]),
        ([[1, 1], [-1, -1]], [-1.0]),
        ([[0, 0], [1, 0]], [0.0]),
        ([[3, 4], [6, 8]], [1.0]),
    ],
)
def test_consecutive_cosines(vectors: list[list[float]], expected: list[float]) -> None:
    assert consecutive_cosines(np.asarray(vectors, dtype=float)) == pytest.approx(expected)


# --------------------------------------------------------------------------- robustness


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=600))
def test_chunkers_raise_nothing_but_kgrag_errors(text: str) -> None:
    def flaky(sentences: list[str]) -> list[list[float]]:
        if len(sentences) % 2:
            raise ValueError("odd")
        return _hash_embed(sentences)

    for chunker in (
        RecursiveChunker(max_tokens=8, overlap_tokens=2),
        MarkdownChunker(max_tokens=8, overlap_tokens=2),
        SemanticChunker(flaky, max_tokens=8, overlap_tokens=2),
    ):
        try:
            pieces = chunker.chunk(text)
        except KgragError:
            continue
        assert all(isinstance(p, ChunkPiece) and p.token_count <= 8 for p in pieces)
