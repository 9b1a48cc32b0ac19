"""Entities and their relationships: value types, LLM and offline extraction, resolution.

Pure code: nothing here talks to Neo4j. The store writes what these functions return.
"""

from .cooccurrence import CO_OCCURS, cooccurrence_weight
from .extract_llm import LLMEntityExtractor, parse_json_reply
from .extract_offline import OfflineEntityExtractor
from .model import (
    Entity,
    EntityMention,
    EntityRelation,
    ExtractionResult,
    entity_id,
    merge_results,
    normalise_name,
    normalise_type,
)
from .resolution import merge_similar_entities, remap_extraction

__all__ = [
    "CO_OCCURS",
    "Entity",
    "EntityMention",
    "EntityRelation",
    "ExtractionResult",
    "LLMEntityExtractor",
    "OfflineEntityExtractor",
    "cooccurrence_weight",
    "entity_id",
    "merge_results",
    "merge_similar_entities",
    "normalise_name",
    "normalise_type",
    "parse_json_reply",
    "remap_extraction",
]
