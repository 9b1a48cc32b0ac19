"""Extractors: raw bytes of one content type in, plain text out, one module per format family.

Every extractor returns text whose paragraphs are separated by one blank line, so the
chunkers can split on paragraphs first. Failures are ``ExtractionError`` (bad bytes, broken
PDF, nothing left) or ``ConfigurationError`` (the optional ``pdf`` extra is missing).

``text`` decodes bytes (and is the plain-text extractor), ``html``, ``markdown`` and ``pdf``
are the other built-ins, ``registry`` maps content types and file extensions to them.
"""

from .html import HTMLExtractor
from .markdown import MarkdownBlock, MarkdownExtractor, markdown_to_text, render_blocks, scan_markdown, strip_markdown_inline
from .pdf import PDFExtractor
from .registry import DEFAULT_EXTENSIONS, DEFAULT_MAX_BYTES, Extractor, ExtractorRegistry, content_type_for_path
from .text import PlainTextExtractor, decode_text

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
