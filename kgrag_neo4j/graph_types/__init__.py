"""Core value types of the entity graph, communities and triples.

``types.py`` holds documents, chunks and results; this package holds the rest of the graph's
values (entities, communities, triples) and the pure name/id normalisers, so that the store
can return them and the domain packages (``entities/``, ``communities/``, ``triples/``) can
compute them without either importing the other. Not named ``model``: ``models.py`` already
holds the neomodel classes.
"""

from .communities import (
    Community,
    CommunityAssignment,
    CommunityReport,
    CommunitySnapshot,
    StoredCommunity,
    community_id,
)
from .context import LocalContext, LocalEntity, LocalRelationship, LocalReport, LocalTextUnit
from .entities import (
    CENTRALITY_KINDS,
    ENTITY_MAX_HOPS,
    Entity,
    EntityBoostContext,
    EntityCandidate,
    EntityDetails,
    EntityGraph,
    EntityListing,
    EntityMention,
    EntityRelation,
    EntityTextUnit,
    Neighbour,
    QueryEntity,
    RelatedEntity,
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
    "ENTITY_MAX_HOPS",
    "Community",
    "CommunityAssignment",
    "CommunityReport",
    "CommunitySnapshot",
    "ConfidenceUpdate",
    "DEFAULT_PREDICATES",
    "EXPANSION_PREDICATES",
    "Entity",
    "EntityBoostContext",
    "EntityCandidate",
    "EntityDetails",
    "EntityGraph",
    "EntityListing",
    "EntityMention",
    "EntityRelation",
    "EntityTextUnit",
    "ExpandedNode",
    "LocalContext",
    "LocalEntity",
    "LocalRelationship",
    "LocalReport",
    "LocalTextUnit",
    "Neighbour",
    "QueryEntity",
    "RelatedEntity",
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
