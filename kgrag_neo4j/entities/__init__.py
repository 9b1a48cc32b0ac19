"""Entities and their relationships: LLM and offline extraction, merging, resolution (the values
are in :mod:`kgrag_neo4j.types.entities`).

Pure code: nothing here talks to Neo4j. The store writes what these functions return.
"""

from .cooccurrence import CO_OCCURS, cooccurrence_weight
from .extract_llm import LLMEntityExtractor, parse_json_reply
from .extract_offline import OfflineEntityExtractor
from .merging import merge_results
from .resolution import merge_similar_entities, remap_extraction

__all__ = [
    "CO_OCCURS",
    "LLMEntityExtractor",
    "OfflineEntityExtractor",
    "cooccurrence_weight",
    "merge_results",
    "merge_similar_entities",
    "parse_json_reply",
    "remap_extraction",
]
