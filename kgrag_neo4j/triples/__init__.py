"""Subject-predicate-object triples: model, parsing, extraction, buffered writes.

Pure code: ``GraphBuffer`` takes the store's write function; nothing here imports the driver.
"""

from .buffer import BufferClosedError, BufferFullError, BufferStats, GraphBuffer
from .extract import extract_triples, triple_messages
from .learning import ErrorResolutionRecorder, FailureRecord, error_pattern, similar_patterns
from .model import (
    CAUSED_BY,
    CONTAINS,
    DEFAULT_PREDICATES,
    EXPANSION_PREDICATES,
    FOLLOWS,
    IN_SESSION,
    LEARNED_FROM,
    PREDICATE_DESCRIPTIONS,
    REFLECTS_ON,
    RELATED_TO,
    RESOLVED_BY,
    SIMILAR_TO,
    ParsedTriples,
    PredicateRegistry,
    Triple,
    normalise_predicate,
    parse_triples,
)

__all__ = [
    "BufferClosedError",
    "BufferFullError",
    "BufferStats",
    "CAUSED_BY",
    "CONTAINS",
    "DEFAULT_PREDICATES",
    "EXPANSION_PREDICATES",
    "ErrorResolutionRecorder",
    "FOLLOWS",
    "FailureRecord",
    "GraphBuffer",
    "IN_SESSION",
    "LEARNED_FROM",
    "PREDICATE_DESCRIPTIONS",
    "ParsedTriples",
    "PredicateRegistry",
    "REFLECTS_ON",
    "RELATED_TO",
    "RESOLVED_BY",
    "SIMILAR_TO",
    "Triple",
    "error_pattern",
    "extract_triples",
    "normalise_predicate",
    "parse_triples",
    "similar_patterns",
    "triple_messages",
]
