"""Core value types of the entity graph, communities and triples.

``types.py`` holds documents, chunks and results; this package holds the rest of the graph's
values (entities, communities, triples) and the pure name/id normalisers, so that the store
can return them and the domain packages (``entities/``, ``communities/``, ``triples/``) can
compute them without either importing the other. Not named ``model``: ``models.py`` already
holds the neomodel classes.
"""

from .communities import Community, CommunityAssignment, CommunityReport, StoredCommunity, community_id
from .entities import (
    CENTRALITY_KINDS,
    Entity,
    EntityDetails,
    EntityGraph,
    EntityListing,
    EntityMention,
    EntityRelation,
    EntityTextUnit,
    Neighbour,
    ScoredEntity,
    entity_id,
    normalise_name,
    normalise_type,
)
from .triples import (
    DEFAULT_PREDICATES,
    EXPANSION_PREDICATES,
    ConfidenceUpdate,
    ExpandedNode,
    PredicateRegistry,
    Triple,
    normalise_predicate,
)

__all__ = [
    "CENTRALITY_KINDS",
    "Community",
    "CommunityAssignment",
    "CommunityReport",
    "ConfidenceUpdate",
    "DEFAULT_PREDICATES",
    "EXPANSION_PREDICATES",
    "Entity",
    "EntityDetails",
    "EntityGraph",
    "EntityListing",
    "EntityMention",
    "EntityRelation",
    "EntityTextUnit",
    "ExpandedNode",
    "Neighbour",
    "PredicateRegistry",
    "ScoredEntity",
    "StoredCommunity",
    "Triple",
    "community_id",
    "entity_id",
    "normalise_name",
    "normalise_type",
    "normalise_predicate",
]
