"""Extractors: raw bytes of one content type in, plain text out (seed: Ingestion, step 1).

Every extractor returns text whose paragraphs are separated by one blank line, so the
chunkers can split on paragraphs first. Failures are ``ExtractionError`` (bad bytes, broken
PDF, nothing left) or ``ConfigurationError`` (the optional ``pdf`` extra is missing).

``ExtractorRegistry.default()`` maps the four built-in content types to their extractors and
file extensions to content types; each call returns a fresh registry, so registering a
custom extractor never leaks into other callers.
"""

from __future__ import annotations

import codecs
import html
import io
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import PurePath
from typing import Protocol, runtime_checkable

from ..errors import ConfigurationError, ExtractionError, InputError, UnsupportedContentType

__all__ = [
    "DEFAULT_EXTENSIONS",
    "DEFAULT_MAX_BYTES",
    "Extractor",
    "ExtractorRegistry",
    "HTMLExtractor",
    "MarkdownExtractor",
    "PDFExtractor",
    "MarkdownBlock",
    "PlainTextExtractor",
    "content_type_for_path",
    "decode_text",
    "markdown_to_text",
    "render_blocks",
    "scan_markdown",
    "strip_markdown_inline",
]

DEFAULT_MAX_BYTES = 50 * 1024 * 1024

DEFAULT_EXTENSIONS: Mapping[str, str] = {
    ".txt": "text/plain",
    ".text": "text/plain",
    ".log": "text/plain",
    ".rst": "text/plain",
    ".csv": "text/plain",
    ".json": "text/plain",
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".html": "text/html",
    ".htm": "text/html",
    ".pdf": "application/pdf",
}


@runtime_checkable
class Extractor(Protocol):
    """Turns the bytes of one content type into plain text."""

    def extract(self, content: bytes) -> str: ...


# --------------------------------------------------------------------------- decoding

# C0 controls that do not occur in text files; tab, LF, VT, FF, CR and ESC (ANSI colours in
# logs) are allowed.
_CONTROL_BYTES = bytes([*range(0x01, 0x09), *range(0x0E, 0x1B), *range(0x1C, 0x20), 0x7F])
_CONTROL_CHARS = frozenset(_CONTROL_BYTES.decode("ascii"))
_BINARY_SAMPLE = 8192
_BINARY_SHARE = 0.10
_UNICODE_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),  # before UTF-16 LE: it starts with the same two bytes
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def decode_text(content: bytes, *, what: str = "text", fallback_encoding: str | None = None) -> str:
    """Decode ``content`` as UTF-8 (strict), dropping a BOM and normalising newlines to ``\\n``.

    UTF-16/32 with a byte-order mark are accepted too (Windows editors write them).
    ``fallback_encoding`` is tried when the bytes are not UTF-8 (an HTML ``<meta charset>``).
    ``ExtractionError`` says whether the bytes look binary or names the first bad byte.
    """
    content = _as_bytes(content)
    for bom, codec in _UNICODE_BOMS:
        if content.startswith(bom):
            try:
                text = content.decode(codec)
            except UnicodeDecodeError as exc:
                raise ExtractionError(
                    f"{what} is not valid {codec.upper()}: {exc.reason} at byte offset {exc.start}"
                ) from None
            _reject_binary_text(text, what=what)
            return _normalise_newlines(text)
    if b"\x00" in content:
        raise ExtractionError(f"{what} looks binary (contains NUL bytes)")
    sample = content[:_BINARY_SAMPLE]
    controls = len(sample) - len(sample.translate(None, _CONTROL_BYTES))
    if sample and controls / len(sample) > _BINARY_SHARE:
        raise ExtractionError(
            f"{what} looks binary ({controls} control bytes in the first {len(sample)} bytes)"
        )
    skip = len(codecs.BOM_UTF8) if content.startswith(codecs.BOM_UTF8) else 0
    try:
        return _normalise_newlines(content[skip:].decode("utf-8"))
    except UnicodeDecodeError as exc:
        utf8_error = ExtractionError(
            f"{what} is not valid UTF-8: {exc.reason} at byte offset {exc.start + skip}"
        )
    if fallback_encoding is None:
        raise utf8_error
    try:
        return _normalise_newlines(content.decode(fallback_encoding))
    except LookupError:
        raise ExtractionError(
            f"{what} declares an unknown encoding {fallback_encoding!r}"
        ) from None
    except UnicodeDecodeError as exc:
        raise ExtractionError(
            f"{what} is neither UTF-8 nor valid {fallback_encoding}: {exc.reason} "
            f"at byte offset {exc.start}"
        ) from None


def _reject_binary_text(text: str, *, what: str) -> None:
    sample = text[:_BINARY_SAMPLE]
    if "\x00" in sample:
        raise ExtractionError(f"{what} looks binary (contains NUL characters)")
    controls = sum(1 for ch in sample if ch in _CONTROL_CHARS)
    if sample and controls / len(sample) > _BINARY_SHARE:
        raise ExtractionError(
            f"{what} looks binary ({controls} control characters in the first {len(sample)})"
        )


def _as_bytes(content: object) -> bytes:
    if isinstance(content, bytes):
        return content
    if isinstance(content, (bytearray, memoryview)):
        return bytes(content)
    raise InputError(f"content must be bytes, got {type(content).__name__}")


def _normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _non_empty(text: str, *, what: str) -> str:
    text = text.strip()
    if not text:
        raise ExtractionError(f"{what} is empty (no text left after extraction)")
    return text


# --------------------------------------------------------------------------- plain text


@dataclass(frozen=True)
class PlainTextExtractor:
    """``text/plain``: decoded and passed through (newlines normalised, outer blanks dropped)."""

    def extract(self, content: bytes) -> str:
        return _non_empty(decode_text(content, what="text"), what="text")


# --------------------------------------------------------------------------- HTML

_HTML_SKIP = frozenset(
    {
        "script", "style", "noscript", "template", "head", "title", "svg", "iframe", "object",
        "canvas",
    }
)
_HTML_BLOCKS = frozenset(
    {
        "address", "article", "aside", "blockquote", "body", "caption", "center", "dd",
        "details", "dialog", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer",
        "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "hr", "html", "legend",
        "li", "main", "nav", "ol", "p", "section", "summary", "table", "tbody", "tfoot",
        "thead", "tr", "ul",
    }
)  # fmt: skip
_HTML_CELLS = frozenset({"td", "th"})
_WHITESPACE = re.compile(r"\s+")
_META_CHARSET = re.compile(
    rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE
)


class _HTMLTextParser(HTMLParser):
    """Collects visible text; every block element starts a new paragraph."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.paragraphs: list[str] = []
        self._lines: list[str] = []
        self._buf: list[str] = []
        self._skip: list[str] = []
        self._pre = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "body" and "head" in self._skip:
            # An unclosed <head> ends where <body> starts, as in browsers.
            del self._skip[self._skip.index("head") :]
        if tag in _HTML_SKIP:
            self._skip.append(tag)
            return
        if self._skip:
            return
        if tag == "pre":
            self._end_paragraph()
            self._pre += 1
        elif tag in _HTML_BLOCKS:
            self._end_paragraph()
        elif tag in _HTML_CELLS:
            self._buf.append(" ")
        elif tag == "br":
            self._end_line()
        elif tag == "img":
            alt = dict(attrs).get("alt")
            if alt:
                self._buf.append(f" {alt} ")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._skip:
            del self._skip[len(self._skip) - 1 - self._skip[::-1].index(tag) :]
            return
        if self._skip:
            return
        if tag == "pre" and self._pre:
            self._end_paragraph()
            self._pre -= 1
        elif tag in _HTML_BLOCKS:
            self._end_paragraph()
        elif tag in _HTML_CELLS:
            self._buf.append(" ")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self._buf.append(data)

    def close(self) -> None:
        super().close()
        self._end_paragraph()

    def _end_line(self) -> None:
        if self._pre:
            self._buf.append("\n")
            return
        line = _WHITESPACE.sub(" ", "".join(self._buf)).strip()
        self._buf.clear()
        if line:
            self._lines.append(line)

    def _end_paragraph(self) -> None:
        if self._pre:
            # Preformatted text keeps its line structure and indentation.
            lines = [ln.rstrip() for ln in "".join(self._buf).split("\n")]
            self._buf.clear()
            text = "\n".join(lines).strip("\n")
            if text.strip():
                self.paragraphs.append(text)
            return
        self._end_line()
        if self._lines:
            self.paragraphs.append("\n".join(self._lines))
            self._lines.clear()


@dataclass(frozen=True)
class HTMLExtractor:
    """``text/html``: visible text only; headings, paragraphs, list items and table rows apart.

    Scripts, styles, ``<noscript>``, ``<template>`` and the whole ``<head>`` are dropped;
    entities are decoded; whitespace is collapsed except inside ``<pre>``. A document that is
    not UTF-8 is decoded with the charset its ``<meta>`` declares.
    """

    def extract(self, content: bytes) -> str:
        text = _decode_html(_as_bytes(content))
        parser = _HTMLTextParser()
        try:
            parser.feed(text)
            parser.close()
        except Exception as exc:  # html.parser raises assorted errors on malformed markup
            raise ExtractionError(f"HTML could not be parsed: {type(exc).__name__}: {exc}") from exc
        return _non_empty("\n\n".join(parser.paragraphs), what="HTML")


def _decode_html(content: bytes) -> str:
    declared = _META_CHARSET.search(content[:4096])
    charset = declared.group(1).decode("ascii") if declared else None
    return decode_text(content, what="HTML", fallback_encoding=charset)


# --------------------------------------------------------------------------- Markdown

_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ATX_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-{2,})[ \t]*$")
_THEMATIC_BREAK = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_QUOTE_MARKER = re.compile(r"^ {0,3}>[ \t]?")
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]+(?:\[[ xX]\][ \t]+)?|[ \t]*$)")
_TABLE_DELIMITER = re.compile(r"^[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
_FOOTNOTE_DEF = re.compile(r"^ {0,3}\[\^[^\]]+\]:[ \t]*")
_REFERENCE_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:[ \t]*\S+")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_SPACES = re.compile(r"[ \t\f\v]+")

# Placeholders shield code spans and escaped characters from the inline rewrites; the
# private-use delimiters are removed from the input first so they cannot collide.
_PH_OPEN, _PH_CLOSE = "\ue000", "\ue001"
_PLACEHOLDER = re.compile(f"{_PH_OPEN}(\\d+){_PH_CLOSE}")
_CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)")
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")
_AUTOLINK = re.compile(
    r"<((?:https?|ftp)://[^\s<>]+|mailto:[^\s<>]+|[^\s<>@]+@[^\s<>@]+\.[^\s<>@]+)>"
)
_DESTINATION = r"(?:\((?:[^()]|\([^()]*\))*\)|\[[^\[\]]*\])"
_IMAGE = re.compile(r"!\[([^\[\]]*)\]" + _DESTINATION)
_LINK = re.compile(r"\[([^\[\]]*)\]" + _DESTINATION)
_FOOTNOTE_REF = re.compile(r"\[\^[^\[\]\s]+\]")
_HTML_COMMENT = re.compile(r"<!--.*?-->")
_HTML_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)
_HTML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9:-]*(?:\s(?:[^<>\"']|\"[^\"]*\"|'[^']*')*)?/?>")
# The content may not contain the delimiter character: that keeps every match attempt
# within one delimiter-to-delimiter stretch (linear time); nesting unwraps over passes.
_EMPHASIS = (
    re.compile(r"(\*{1,3})(?=[^\s*])([^*]*?)(?<=[^\s*])\1(?!\*)"),
    re.compile(r"(?<![\w\\])(_{1,3})(?=[^\s_])([^_]*?)(?<=[^\s_])\1(?![\w_])"),
    re.compile(r"(~~)(?=[^\s~])([^~]*?)(?<=[^\s~])~~"),
)


def strip_markdown_inline(text: str) -> str:
    """Inline Markdown to text: emphasis, code spans, links, images, tags, escapes, entities."""
    text = text.replace(_PH_OPEN, "").replace(_PH_CLOSE, "")
    kept: list[str] = []

    def keep(value: str) -> str:
        kept.append(value)
        return f"{_PH_OPEN}{len(kept) - 1}{_PH_CLOSE}"

    text = _CODE_SPAN.sub(lambda m: keep(_code_span_text(m.group(2))), text)
    text = _ESCAPED.sub(lambda m: keep(m.group(1)), text)
    text = _AUTOLINK.sub(r"\1", text)
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _FOOTNOTE_REF.sub("", text)
    text = _HTML_COMMENT.sub("", text)
    text = _HTML_BREAK.sub(" ", text)
    text = _HTML_TAG.sub("", text)
    for _ in range(3):  # nested emphasis (***a*** , **_a_**) unwraps one layer per pass
        before = text
        for pattern in _EMPHASIS:
            text = pattern.sub(r"\2", text)
        if text == before:
            break
    if text.endswith("\\"):  # a trailing backslash is a hard line break
        text = text[:-1]
    # Entities are decoded around the placeholders, never inside kept code, and a decoded
    # entity can never be mistaken for a placeholder.
    parts = _PLACEHOLDER.split(text)
    text = "".join(kept[int(p)] if i % 2 else html.unescape(p) for i, p in enumerate(parts))
    return _SPACES.sub(" ", text).strip()


def _code_span_text(code: str) -> str:
    # CommonMark strips one space on each side so that `` `x` `` can hold a backtick.
    if len(code) >= 2 and code[0] == " " and code[-1] == " " and code.strip():
        return code[1:-1]
    return code


@dataclass(frozen=True)
class MarkdownBlock:
    """One classified Markdown line (a setext heading covers two)."""

    kind: str  # heading | text | item | row | code | break | skip
    text: str
    start: int  # first raw line index
    end: int  # one past the last raw line index
    level: int = 0


def _strip_quotes(line: str, limit: int | None = None) -> tuple[str, int]:
    depth = 0
    while limit is None or depth < limit:
        m = _QUOTE_MARKER.match(line)
        if m is None:
            break
        line = line[m.end() :]
        depth += 1
    return line, depth


def _table_cells(line: str) -> str:
    row = line.strip()
    row = row[1:] if row.startswith("|") else row
    row = row[:-1] if row.endswith("|") and not row.endswith("\\|") else row
    cells = (strip_markdown_inline(c.replace("\\|", "|")) for c in _CELL_SPLIT.split(row))
    return " ".join(c for c in cells if c)


def scan_markdown(markdown: str) -> list[MarkdownBlock]:
    """Classify each line of ``markdown`` (shared by the extractor and the Markdown chunker).

    Why not markdown-it-py: the chunker needs a block per source line (soft-wrapped lines,
    table rows, list items, line numbers); markdown-it's tokens are per block, and its parse
    alone costs as much as this whole scan on real documents (``python -m bench libraries``).
    """
    lines = _normalise_newlines(markdown).split("\n")
    blocks: list[MarkdownBlock] = []
    fence: tuple[str, int, int] | None = None  # marker char, marker length, quote depth
    in_comment = False
    in_table = False
    paragraph_lines = 0
    skip_next = False

    def add(kind: str, text: str, i: int, level: int = 0) -> None:
        blocks.append(MarkdownBlock(kind, text, i, i + 1, level))

    for i, raw in enumerate(lines):
        if fence is not None:
            line, _ = _strip_quotes(raw, fence[2])
            close = line.strip()
            indent = len(line) - len(line.lstrip(" "))
            if close and set(close) == {fence[0]} and len(close) >= fence[1] and indent <= 3:
                fence = None
                add("break", "", i)
            else:
                add("code", line.rstrip(), i)
            continue
        if skip_next:
            skip_next = False
            add("skip", "", i)
            continue
        line, depth = _strip_quotes(raw)
        if in_comment:
            end = line.find("-->")
            if end < 0:
                add("skip", "", i)
                paragraph_lines = 0
                continue
            in_comment = False
            line = line[end + 3 :]
        line = _HTML_COMMENT.sub("", line)
        if "<!--" in line:
            line, in_comment = line[: line.index("<!--")], True
        if not line.strip():
            add("break", "", i)
            paragraph_lines, in_table = 0, False
            continue
        if m := _FENCE_OPEN.match(line):
            marker = m.group(1)
            if marker[0] == "~" or "`" not in line[m.end() :]:
                fence = (marker[0], len(marker), depth)
                add("break", "", i)
                paragraph_lines, in_table = 0, False
                continue
        if m := _ATX_HEADING.match(line):
            add("heading", strip_markdown_inline(m.group(2) or ""), i, len(m.group(1)))
            paragraph_lines, in_table = 0, False
            continue
        if paragraph_lines and (m := _SETEXT_UNDERLINE.match(line)):
            # The whole paragraph above the underline is the heading, as in CommonMark.
            paragraph = blocks[-paragraph_lines:]
            del blocks[-paragraph_lines:]
            text = " ".join(b.text for b in paragraph if b.text)
            level = 1 if m.group(1)[0] == "=" else 2
            blocks.append(MarkdownBlock("heading", text, paragraph[0].start, i + 1, level))
            paragraph_lines = 0
            continue
        if _THEMATIC_BREAK.match(line):
            add("break", "", i)
            paragraph_lines, in_table = 0, False
            continue
        if in_table and "|" in line:
            add("row", _table_cells(line), i)
            continue
        in_table = False
        if "|" in line and i + 1 < len(lines):
            following, _ = _strip_quotes(lines[i + 1])
            if "|" in following and _TABLE_DELIMITER.match(following):
                add("row", _table_cells(line), i)
                in_table, skip_next, paragraph_lines = True, True, 0
                continue
        if m := _FOOTNOTE_DEF.match(line):
            add("item", strip_markdown_inline(line[m.end() :]), i)
            paragraph_lines = 0
            continue
        if _REFERENCE_DEF.match(line):
            add("skip", "", i)
            paragraph_lines = 0
            continue
        if m := _LIST_ITEM.match(line):
            add("item", strip_markdown_inline(line[m.end() :]), i)
            paragraph_lines = 0
            continue
        add("text", strip_markdown_inline(line), i)
        paragraph_lines += 1
    return blocks


def render_blocks(blocks: Iterable[MarkdownBlock]) -> str:
    """Join classified lines into text: headings and code blocks are paragraphs of their own."""
    out: list[str] = []
    lines: list[str] = []
    code: list[str] = []
    last_kind = ""

    def flush_lines() -> None:
        if lines:
            out.append("\n".join(lines))
            lines.clear()

    def flush_code() -> None:
        text = "\n".join(code).strip("\n")
        code.clear()
        if text.strip():
            out.append(text)

    for b in blocks:
        if b.kind != "code":
            flush_code()
        if b.kind == "heading":
            flush_lines()
            if b.text:
                out.append(b.text)
        elif b.kind == "code":
            flush_lines()
            code.append(b.text)
        elif b.kind == "break":
            flush_lines()
        elif b.kind in ("item", "row"):
            if b.text:
                lines.append(b.text)
        elif b.kind == "text" and b.text:
            # Soft-wrapped lines of a paragraph (or a list item) read as one line.
            if lines and last_kind in ("text", "item"):
                lines[-1] = f"{lines[-1]} {b.text}"
            else:
                lines.append(b.text)
        if b.kind != "skip":
            last_kind = b.kind
    flush_code()
    flush_lines()
    return "\n\n".join(out)


def markdown_to_text(markdown: str) -> str:
    """Strip Markdown formatting and keep the content.

    Heading markers go but each heading stays as a paragraph of its own; code fences go but
    the code stays verbatim; links and images become their text; list and quote markers,
    emphasis, HTML tags and table pipes are removed (cells are joined by spaces).
    """
    return render_blocks(scan_markdown(markdown))


@dataclass(frozen=True)
class MarkdownExtractor:
    """``text/markdown``: ``markdown_to_text`` over the decoded bytes."""

    def extract(self, content: bytes) -> str:
        text = decode_text(content, what="Markdown")
        return _non_empty(markdown_to_text(text), what="Markdown")


# --------------------------------------------------------------------------- PDF

_PDF_INSTALL_HINT = 'PDF extraction needs pypdf: pip install "kgrag-neo4j[pdf]"'


def _import_pypdf():
    try:
        import pypdf
    except ImportError as exc:
        raise ConfigurationError(_PDF_INSTALL_HINT) from exc
    return pypdf


@dataclass(frozen=True)
class PDFExtractor:
    """``application/pdf`` (optional extra ``pdf``): the text of every page, pages apart.

    Only text that the PDF stores as text is found; scanned pages need OCR first.
    """

    def extract(self, content: bytes) -> str:
        pypdf = _import_pypdf()
        content = _as_bytes(content)
        if b"%PDF-" not in content[:1024]:
            raise ExtractionError("PDF is broken: no %PDF- header in the first 1024 bytes")
        try:
            reader = pypdf.PdfReader(io.BytesIO(content), strict=False)
            if reader.is_encrypted and not reader.decrypt(""):
                raise ExtractionError("PDF is encrypted with a password")
            pages = [page.extract_text() or "" for page in reader.pages]
        except ExtractionError:
            raise
        except Exception as exc:  # pypdf raises many unrelated types on damaged files
            raise ExtractionError(f"PDF is broken: {type(exc).__name__}: {exc}") from exc
        texts = []
        for page in pages:
            lines = [ln.rstrip() for ln in _normalise_newlines(page).split("\n")]
            text = "\n".join(lines).strip()
            if text:
                texts.append(text)
        return _non_empty("\n\n".join(texts), what="PDF")


# --------------------------------------------------------------------------- registry

_CONTENT_TYPE = re.compile(r"^[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*$")


def _normalise_content_type(content_type: str) -> str:
    # "text/HTML; charset=utf-8" -> "text/html": parameters never select the extractor.
    return str(content_type).split(";", 1)[0].strip().lower()


def _extension_of(path: str | os.PathLike[str]) -> tuple[str, str]:
    # os.path, not PurePath: called once per file of a folder ingest, where pathlib's
    # parsing cost more than the read (same answers: PurePath.suffix ignores a leading dot)
    stem, ext = os.path.splitext(os.path.basename(os.fspath(path)))
    if stem and len(ext) > 1:
        return stem + ext, ext.lower()
    name = PurePath(os.fspath(path)).name
    return name, PurePath(name).suffix.lower()


def _lookup_extension(path: str | os.PathLike[str], table: Mapping[str, str]) -> str:
    name, ext = _extension_of(path)
    if ext in table:
        return table[ext]
    known = ", ".join(sorted(table))
    if not ext:
        raise UnsupportedContentType(f"{name!r} has no file extension; supported: {known}")
    try:
        return table[ext]
    except KeyError:
        raise UnsupportedContentType(
            f"unsupported file extension {ext!r} ({name!r}); supported: {known}"
        ) from None


def content_type_for_path(path: str | os.PathLike[str]) -> str:
    """Content type of ``path`` by its extension (case-insensitive), from ``DEFAULT_EXTENSIONS``."""
    return _lookup_extension(path, DEFAULT_EXTENSIONS)


class ExtractorRegistry:
    """Content types -> extractors, extensions -> content types, and a size guard.

    ``ExtractorRegistry.default()`` holds the four built-ins; ``ExtractorRegistry()`` is empty.
    ``max_bytes`` bounds the input of ``extract`` (50 MiB by default).
    """

    def __init__(self, *, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
            raise ConfigurationError(f"max_bytes must be a positive integer, got {max_bytes!r}")
        self.max_bytes = max_bytes
        self._extractors: dict[str, Extractor] = {}
        self._extensions: dict[str, str] = {}

    @classmethod
    def default(cls, *, max_bytes: int = DEFAULT_MAX_BYTES) -> ExtractorRegistry:
        """A fresh registry with plain text, HTML, Markdown and PDF and the default extensions."""
        registry = cls(max_bytes=max_bytes)
        registry.register_extractor("text/plain", PlainTextExtractor())
        registry.register_extractor("text/html", HTMLExtractor())
        registry.register_extractor("text/markdown", MarkdownExtractor())
        registry.register_extractor("application/pdf", PDFExtractor())
        registry._extensions.update(DEFAULT_EXTENSIONS)
        return registry

    def register_extractor(
        self, content_type: str, extractor: Extractor, *, extensions: Iterable[str] = ()
    ) -> None:
        """Use ``extractor`` for ``content_type`` (replacing any), and map ``extensions`` to it."""
        ct = _normalise_content_type(content_type)
        if not _CONTENT_TYPE.match(ct):
            raise ConfigurationError(
                f"content type must look like 'type/subtype', got {content_type!r}"
            )
        if not isinstance(extractor, Extractor):
            raise ConfigurationError(
                f"extractor for {ct!r} must have an extract(content: bytes) -> str method, "
                f"got {type(extractor).__name__}"
            )
        exts = []
        for ext in [extensions] if isinstance(extensions, str) else extensions:
            ext = str(ext).strip().lower()
            ext = ext if ext.startswith(".") else f".{ext}"
            if len(ext) < 2 or "/" in ext:
                raise ConfigurationError(f"not a file extension: {ext!r}")
            exts.append(ext)
        self._extractors[ct] = extractor
        self._extensions.update(dict.fromkeys(exts, ct))

    @property
    def extensions(self) -> tuple[str, ...]:
        """File extensions (with the dot) this registry knows a content type for."""
        return tuple(sorted(self._extensions))

    @property
    def content_types(self) -> tuple[str, ...]:
        return tuple(sorted(self._extractors))

    def extractor_for(self, content_type: str) -> Extractor:
        ct = _normalise_content_type(content_type)
        try:
            return self._extractors[ct]
        except KeyError:
            known = ", ".join(self.content_types) or "none"
            raise UnsupportedContentType(
                f"no extractor for content type {ct!r}; registered: {known}"
            ) from None

    def content_type_for_path(self, path: str | os.PathLike[str]) -> str:
        """Content type of ``path`` by extension, including extensions registered here."""
        return _lookup_extension(path, self._extensions)

    def extract(
        self,
        content: bytes,
        *,
        content_type: str | None = None,
        path: str | os.PathLike[str] | None = None,
    ) -> str:
        """Text of ``content``, typed by ``content_type`` or else by the extension of ``path``."""
        content = _as_bytes(content)
        if content_type is None:
            if path is None:
                raise InputError("extract needs a content_type or a path to detect it from")
            content_type = self.content_type_for_path(path)
        extractor = self.extractor_for(content_type)
        if len(content) > self.max_bytes:
            raise InputError(
                f"content is {len(content)} bytes, over the limit of {self.max_bytes} bytes "
                "(raise max_bytes to accept it)"
            )
        text = extractor.extract(content)
        if not isinstance(text, str):
            raise ExtractionError(
                f"extractor for {_normalise_content_type(content_type)!r} returned "
                f"{type(text).__name__}, not str"
            )
        return _non_empty(text, what=f"{_normalise_content_type(content_type)} content")
