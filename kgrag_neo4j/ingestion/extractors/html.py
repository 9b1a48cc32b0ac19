"""The HTML extractor: visible text only, block elements apart."""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser

from ...errors import ExtractionError
from .text import as_bytes, decode_text, non_empty

__all__ = ["HTMLExtractor"]

_HTML_SKIP = frozenset(
    {
        "script",
        "style",
        "noscript",
        "template",
        "head",
        "title",
        "svg",
        "iframe",
        "object",
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
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)


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
        text = _decode_html(as_bytes(content))
        parser = _HTMLTextParser()
        try:
            parser.feed(text)
            parser.close()
        except Exception as exc:  # html.parser raises assorted errors on malformed markup
            raise ExtractionError(f"HTML could not be parsed: {type(exc).__name__}: {exc}") from exc
        return non_empty("\n\n".join(parser.paragraphs), what="HTML")


def _decode_html(content: bytes) -> str:
    declared = _META_CHARSET.search(content[:4096])
    charset = declared.group(1).decode("ascii") if declared else None
    return decode_text(content, what="HTML", fallback_encoding=charset)
