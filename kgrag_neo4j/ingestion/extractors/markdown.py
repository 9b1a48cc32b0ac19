"""Markdown to text: the line scan the extractor and the Markdown chunker share, and the
Markdown extractor."""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from dataclasses import dataclass

from .text import decode_text, non_empty, normalise_newlines

__all__ = ["MarkdownBlock", "MarkdownExtractor", "markdown_to_text", "render_blocks", "scan_markdown", "strip_markdown_inline"]

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
_AUTOLINK = re.compile(r"<((?:https?|ftp)://[^\s<>]+|mailto:[^\s<>]+|[^\s<>@]+@[^\s<>@]+\.[^\s<>@]+)>")
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
    lines = normalise_newlines(markdown).split("\n")
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
        return non_empty(markdown_to_text(text), what="Markdown")
