"""Subject-predicate-object triples: parsing, extraction, buffered writes (the values are in
:mod:`kgrag_neo4j.types.triples`).

Pure code: ``GraphBuffer`` takes the store's write function; nothing here imports the driver.
"""

from .buffer import BufferClosedError, BufferFullError, BufferStats, GraphBuffer
from .extract import extract_triples, triple_messages
from .learning import ErrorResolutionRecorder, FailureRecord, error_pattern, similar_patterns
from .parsing import parse_triples

__all__ = [
    "BufferClosedError",
    "BufferFullError",
    "BufferStats",
    "ErrorResolutionRecorder",
    "FailureRecord",
    "GraphBuffer",
    "error_pattern",
    "extract_triples",
    "parse_triples",
    "similar_patterns",
    "triple_messages",
]
