"""Chunkers: plain text in, pieces sized for embedding out (seed: Ingestion, step 2).

* ``RecursiveChunker`` splits paragraphs, then lines, then sentences, then words, then
  characters, and merges the pieces back up to ``max_tokens`` with ``overlap_tokens`` of
  overlap (langchain's ``RecursiveCharacterTextSplitter`` does the merging).
* ``MarkdownChunker`` splits raw Markdown at headings, keeps the heading path as metadata and
  stores the section as clean text; oversized sections go through ``RecursiveChunker``.
* ``SemanticChunker`` starts a new chunk where consecutive sentences stop being similar.

Every piece's ``estimate_tokens(content)`` is at most ``max_tokens``; the same input always
gives the same pieces.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..errors import ConfigurationError, InputError, ProviderResponseError
from .extractors.markdown import MarkdownBlock, render_blocks, scan_markdown
from .tokens import CHARS_PER_TOKEN, estimate_tokens, tokens_to_chars

__all__ = [
    "ABBREVIATIONS",
    "SENTENCE_BOUNDARY",
    "ChunkPiece",
    "Chunker",
    "EmbedFn",
    "MarkdownChunker",
    "RecursiveChunker",
    "SemanticChunker",
    "consecutive_cosines",
    "percentile",
    "split_sentences",
]

logger = logging.getLogger(__name__)

EmbedFn = Callable[[list[str]], Sequence[Sequence[float]]]


@dataclass(frozen=True, slots=True)
class ChunkPiece:
    """One chunk's text and what the chunker knows about it (e.g. its heading path)."""

    content: str
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def token_count(self) -> int:
        return estimate_tokens(self.content)


@runtime_checkable
class Chunker(Protocol):
    """Splits plain text into pieces of at most a token budget each."""

    def chunk(self, text: str) -> list[ChunkPiece]: ...


# --------------------------------------------------------------------------- sentences

# Words whose trailing dot does not end a sentence. Matched case-insensitively, whole word.
ABBREVIATIONS = (
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "vs", "etc", "inc", "ltd",
    "corp", "dept", "fig", "approx", "cf", "al", "gen", "col", "lt", "capt", "rev", "gov",
)  # fmt: skip


def _any_case(word: str) -> str:
    return "".join(f"[{c.upper()}{c.lower()}]" for c in word)


# Python's lookbehind needs a fixed width, so every exception is its own lookbehind.
_NOT_AFTER = "".join(
    [
        *(rf"(?<!\b{_any_case(a)}\.)" for a in ABBREVIATIONS),
        r"(?<!\b[A-Z]\.)",  # an initial: "J. Smith"
        r"(?<!\b[A-Za-z]\.[A-Za-z]\.)",  # e.g.  i.e.  U.S.  a.m.
        *(rf"(?<!{start}\d{{{n}}}\.)" for start in ("^", "\n") for n in (1, 2, 3)),  # "1. item"
    ]
)
# A sentence ends at . ! ? or … (optionally closed by a quote or bracket) before whitespace;
# decimals (3.14, $1.50) have no whitespace after the dot, so they never match. CJK
# full stops end a sentence without a following space; closing brackets stay with it.
SENTENCE_BOUNDARY = (
    r"(?:(?<=[.!?…])|(?<=[.!?…][\"'”’)\]]))" + _NOT_AFTER + r"\s+"
    r"|(?<=[。！？｡])(?![。！？｡])[」』）”’\"')]*\s*"
)
_SENTENCE_BOUNDARY = re.compile(SENTENCE_BOUNDARY)


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``, stripped; abbreviations and decimals do not end a sentence."""
    sentences = []
    start = 0
    for m in _SENTENCE_BOUNDARY.finditer(text):
        if m.end() == start:  # an empty match right after the previous cut
            continue
        sentences.append(text[start : m.end()])
        start = m.end()
    sentences.append(text[start:])
    return [s.strip() for s in sentences if s.strip()]


# --------------------------------------------------------------------------- recursive


def _check_text(text: object) -> str:
    if not isinstance(text, str):
        raise InputError(f"text to chunk must be str, got {type(text).__name__}")
    return text


def _check_budget(max_tokens: int, overlap_tokens: int) -> None:
    for name, value in (("max_tokens", max_tokens), ("overlap_tokens", overlap_tokens)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigurationError(f"{name} must be an integer, got {value!r}")
    if max_tokens < 1:
        raise ConfigurationError(f"max_tokens must be at least 1, got {max_tokens}")
    if not 0 <= overlap_tokens < max_tokens:
        raise ConfigurationError(f"overlap_tokens must be between 0 and max_tokens - 1 ({max_tokens - 1}), got {overlap_tokens}")


class RecursiveChunker:
    """Paragraphs -> lines -> sentences -> words -> characters, merged up to ``max_tokens``.

    Consecutive chunks share up to ``overlap_tokens`` of whole pieces (sentences, or words
    inside a long sentence), so a thought cut at a boundary is seen by both chunks.
    """

    def __init__(self, *, max_tokens: int = 512, overlap_tokens: int = 50) -> None:
        _check_budget(max_tokens, overlap_tokens)
        self.max_tokens = max_tokens
        self.overlap_tokens = overlap_tokens
        # The budget is measured in characters (tokens * 4) rather than by summing
        # estimate_tokens per piece: rounding every short word up to a whole token would
        # over-count word-level merges by up to 4x and leave chunks far below the limit.
        self._chunk_chars = tokens_to_chars(max_tokens)
        self._splitter: Any = None

    def _split(self, text: str) -> list[str]:
        if len(text) < self._chunk_chars:
            # what the splitter returns for a text under its size (its pieces keep every
            # character and merge back into one, stripped; tests/test_chunkers.py compares),
            # without building it: langchain and pydantic take a quarter second to import,
            # a folder of one-paragraph files never needs them
            return [text.strip()]
        if self._splitter is None:
            from langchain_text_splitters import RecursiveCharacterTextSplitter

            self._splitter = RecursiveCharacterTextSplitter(
                separators=[r"\n[^\S\n]*\n\s*", r"\n", SENTENCE_BOUNDARY, r"\s+", ""],
                is_separator_regex=True,
                keep_separator="end",
                chunk_size=self._chunk_chars,
                chunk_overlap=tokens_to_chars(self.overlap_tokens),
                length_function=len,
                strip_whitespace=True,
            )
        return list(self._splitter.split_text(text))

    def __repr__(self) -> str:
        return f"RecursiveChunker(max_tokens={self.max_tokens}, overlap_tokens={self.overlap_tokens})"

    def chunk(self, text: str) -> list[ChunkPiece]:
        if not _check_text(text).strip():
            return []
        return [ChunkPiece(piece) for piece in self._split(text)]


# --------------------------------------------------------------------------- markdown


@dataclass
class _Section:
    headings: tuple[str, ...]
    blocks: list[MarkdownBlock]

    @property
    def has_body(self) -> bool:
        return any(b.kind not in ("heading", "break", "skip") and b.text.strip() for b in self.blocks)


def _markdown_sections(markdown: str) -> list[_Section]:
    """Cut the classified lines at every heading, tracking the path of enclosing headings."""
    sections: list[_Section] = []
    stack: list[tuple[int, str]] = []
    current = _Section((), [])
    for block in scan_markdown(markdown):
        if block.kind == "heading":
            if current.blocks:
                sections.append(current)
            while stack and stack[-1][0] >= block.level:
                stack.pop()
            stack.append((block.level, block.text))
            current = _Section(tuple(text for _, text in stack), [])
        current.blocks.append(block)
    if current.blocks:
        sections.append(current)
    return sections


class MarkdownChunker:
    """One chunk per Markdown section, with its heading path in ``metadata``.

    ``metadata["headings"]`` lists the enclosing headings outermost first and
    ``metadata["section_heading"]`` is the innermost (``None`` before the first heading).
    The chunk text is the section with formatting stripped (``markdown_to_text``), starting
    with its heading; a heading with no text of its own (``# Guide`` right before
    ``## Setup``) is carried into its first subsection. Sections over ``max_tokens`` are
    split by ``RecursiveChunker``; every piece starts with the heading again and keeps the
    section's metadata.
    """

    def __init__(self, *, max_tokens: int = 1024, overlap_tokens: int = 50) -> None:
        _check_budget(max_tokens, overlap_tokens)
        self.max_tokens = max_tokens
        self.overlap_tokens = overlap_tokens
        self._fallback = RecursiveChunker(max_tokens=max_tokens, overlap_tokens=overlap_tokens)

    def __repr__(self) -> str:
        return f"MarkdownChunker(max_tokens={self.max_tokens}, overlap_tokens={self.overlap_tokens})"

    def chunk(self, text: str) -> list[ChunkPiece]:
        if not _check_text(text).strip():
            return []
        pieces: list[ChunkPiece] = []
        carried: list[MarkdownBlock] = []
        sections = _markdown_sections(text)
        for i, section in enumerate(sections):
            following = sections[i + 1].headings if i + 1 < len(sections) else ()
            depth = len(section.headings)
            is_parent = len(following) > depth and following[:depth] == section.headings
            if section.headings and not section.has_body and is_parent:
                carried.extend(section.blocks)
                continue
            own_heading = 1 if section.headings else 0
            head = [*carried, *section.blocks[:own_heading]]
            body = section.blocks[own_heading:]
            carried = []
            metadata = {
                "headings": list(section.headings),
                "section_heading": section.headings[-1] if section.headings else None,
            }
            for content in self._split_section(render_blocks(head), render_blocks(body)):
                pieces.append(ChunkPiece(content, {**metadata, "headings": list(section.headings)}))
        return pieces

    def _split_section(self, heading: str, body: str) -> list[str]:
        whole = "\n\n".join(part for part in (heading, body) if part)
        if not whole or estimate_tokens(whole) <= self.max_tokens:
            return [whole] if whole else []
        # Every piece of an oversized section repeats the heading, so a piece found on its
        # own still says what it is about; the body gets the budget the heading leaves.
        body_tokens = (tokens_to_chars(self.max_tokens) - len(heading) - 2) // CHARS_PER_TOKEN
        if not heading or not body or body_tokens < max(1, self.max_tokens // 2):
            return [p.content for p in self._fallback.chunk(whole)]
        splitter = RecursiveChunker(max_tokens=body_tokens, overlap_tokens=min(self.overlap_tokens, body_tokens - 1))
        return [f"{heading}\n\n{p.content}" for p in splitter.chunk(body)]


# --------------------------------------------------------------------------- semantic


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) with linear interpolation, as numpy's default."""
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def consecutive_cosines(vectors: np.ndarray) -> list[float]:
    """Cosine similarity of each row with the next; a zero vector is similar to nothing."""
    norms = np.linalg.norm(vectors, axis=1)
    dots = np.einsum("ij,ij->i", vectors[:-1], vectors[1:])
    denominators = norms[:-1] * norms[1:]
    with np.errstate(divide="ignore", invalid="ignore"):
        safe = np.where(denominators > 0, denominators, 1.0)
        cosines = np.where(denominators > 0, dots / safe, 0.0)
    return [float(c) for c in cosines]


def _as_matrix(vectors: object, expected_rows: int) -> np.ndarray:
    try:
        matrix = np.asarray(vectors, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ProviderResponseError(f"embed_fn returned something that is not vectors: {exc}") from None
    if matrix.ndim != 2 or matrix.shape[0] != expected_rows or matrix.shape[1] == 0:
        raise ProviderResponseError(f"embed_fn returned shape {matrix.shape} for {expected_rows} sentences")
    if not np.isfinite(matrix).all():
        raise ProviderResponseError("embed_fn returned NaN or infinite values")
    return matrix


class SemanticChunker:
    """Splits where consecutive sentences stop being similar (seed: percentile breakpoints).

    The sentences are embedded in one ``embed_fn`` call (an ``EmbeddingProvider.embed`` bound
    method fits); a chunk ends after sentence *i* when the cosine between sentences *i* and
    *i + 1* is below the ``breakpoint_percentile``-th percentile of all those cosines.
    Text that fits in ``max_tokens`` is returned whole without an embedding call; groups
    over ``max_tokens`` are split by ``RecursiveChunker`` (with ``overlap_tokens``). If
    ``embed_fn`` fails or returns the wrong shape, the whole text falls back to
    ``RecursiveChunker`` and a warning is logged.
    """

    def __init__(
        self,
        embed_fn: EmbedFn,
        *,
        max_tokens: int = 512,
        breakpoint_percentile: float = 25,
        overlap_tokens: int = 50,
    ) -> None:
        if not callable(embed_fn):
            raise ConfigurationError(f"embed_fn must be callable, got {type(embed_fn).__name__}")
        _check_budget(max_tokens, overlap_tokens)
        if (
            isinstance(breakpoint_percentile, bool)
            or not isinstance(breakpoint_percentile, (int, float))
            or not 0 <= breakpoint_percentile <= 100
        ):
            raise ConfigurationError(f"breakpoint_percentile must be a number from 0 to 100, got {breakpoint_percentile!r}")
        self.embed_fn = embed_fn
        self.max_tokens = max_tokens
        self.breakpoint_percentile = breakpoint_percentile
        self.overlap_tokens = overlap_tokens
        self._fallback = RecursiveChunker(max_tokens=max_tokens, overlap_tokens=overlap_tokens)

    def __repr__(self) -> str:
        return (
            f"SemanticChunker(max_tokens={self.max_tokens}, "
            f"breakpoint_percentile={self.breakpoint_percentile}, "
            f"overlap_tokens={self.overlap_tokens})"
        )

    def chunk(self, text: str) -> list[ChunkPiece]:
        text = _check_text(text).strip()
        if not text:
            return []
        if estimate_tokens(text) <= self.max_tokens:
            return [ChunkPiece(text)]
        sentences: list[str] = []
        paragraph_of: list[int] = []
        for number, paragraph in enumerate(re.split(r"\n[^\S\n]*\n", text)):
            for sentence in split_sentences(paragraph):
                sentences.append(sentence)
                paragraph_of.append(number)
        if len(sentences) < 2:
            return self._fallback.chunk(text)
        try:
            vectors = _as_matrix(self.embed_fn(list(sentences)), len(sentences))
        except Exception as exc:  # semantic chunking degrades to recursive chunking on any embed failure
            logger.warning(
                "semantic chunking fell back to recursive chunking: embed_fn failed (%s: %s)",
                type(exc).__name__,
                exc,
            )
            return self._fallback.chunk(text)
        similarities = consecutive_cosines(vectors)
        threshold = percentile(similarities, self.breakpoint_percentile)
        pieces: list[ChunkPiece] = []
        group = sentences[0]
        for i, similarity in enumerate(similarities):
            if similarity < threshold:
                pieces.extend(self._sized(group))
                group = sentences[i + 1]
            else:
                joiner = " " if paragraph_of[i] == paragraph_of[i + 1] else "\n\n"
                group = f"{group}{joiner}{sentences[i + 1]}"
        pieces.extend(self._sized(group))
        return pieces

    def _sized(self, group: str) -> list[ChunkPiece]:
        if estimate_tokens(group) <= self.max_tokens:
            return [ChunkPiece(group)]
        return self._fallback.chunk(group)
