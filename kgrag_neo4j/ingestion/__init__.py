"""The write path: bytes to text, text to chunks, chunks with vectors and edges to the store.

The names exported here are the pure part (extractors, chunkers, token estimates: nothing
of it talks to Neo4j or to a model provider; the semantic chunker takes an embedding
function as an argument). The modules, from the public API down:

- ``ingestor``: ``Ingestor``, the public API (text, files, streams, folders, edges,
  re-embedding) and each document's identity (id and content hash);
- ``batch``: a whole ``kgrag ingest`` run: file selection, one row per file, progress,
  the stop at an error that ends the run; ``outcomes``: what it reports per file;
- ``pipeline``: ``FolderPipeline``, many files in groups and batches, written while the
  next batch is embedded;
- ``writing``: the steps every document takes (unchanged check, chunk, embed, own edges,
  write); ``chunking``: a document cut into chunks; ``vectors``: embedding and the checks
  of an embedder's answer; ``document``: one document on its way;
- ``chunk_edges``: edges for documents and the store (similarity, cross-document LLM
  edges, pruning), over ``edges`` and ``similarity`` (the algorithms);
- ``capabilities``: what the store can do beyond ``Store``, found once;
- ``extractors/``, ``chunkers``, ``files`` (what may be read), ``reembed``, ``tokens``.
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
