"""The write path before the database: extract text from bytes, cut it into chunks.

Pure Python; nothing here talks to Neo4j or to a model provider (the semantic chunker takes
an embedding function as an argument).
"""

from .chunkers import (
    Chunker,
    ChunkPiece,
    EmbedFn,
    MarkdownChunker,
    RecursiveChunker,
    SemanticChunker,
    split_sentences,
)
from .extractors import (
    DEFAULT_EXTENSIONS,
    DEFAULT_MAX_BYTES,
    Extractor,
    ExtractorRegistry,
    HTMLExtractor,
    MarkdownExtractor,
    PDFExtractor,
    PlainTextExtractor,
    content_type_for_path,
    decode_text,
    markdown_to_text,
)
from .tokens import CHARS_PER_TOKEN, estimate_tokens

__all__ = [
    "CHARS_PER_TOKEN",
    "DEFAULT_EXTENSIONS",
    "DEFAULT_MAX_BYTES",
    "ChunkPiece",
    "Chunker",
    "EmbedFn",
    "Extractor",
    "ExtractorRegistry",
    "HTMLExtractor",
    "MarkdownChunker",
    "MarkdownExtractor",
    "PDFExtractor",
    "PlainTextExtractor",
    "RecursiveChunker",
    "SemanticChunker",
    "content_type_for_path",
    "decode_text",
    "estimate_tokens",
    "markdown_to_text",
    "split_sentences",
]
