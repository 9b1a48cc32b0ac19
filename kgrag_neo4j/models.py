"""The graph model as neomodel node classes, for navigating what kgrag stored as objects.

    from kgrag_neo4j.models import Document, bind_neomodel
    bind_neomodel(store)                      # neomodel now uses the store's driver
    doc = Document.nodes.get(uid=result.document_id)   # ``uid`` is the stored ``id``
    for chunk in doc.chunks.order_by("chunk_index"):
        print(chunk.chunk_index, [e.name for e in chunk.mentions])

neomodel reserves the attribute name ``id``, so the stored ``id`` property is ``uid`` here.
Reads go through neomodel; writes should go through the library (``Neo4jStore``), whose
Cypher files keep every write idempotent and transactional.

Why the schema is not installed with neomodel's ``install_labels``: neomodel installs
through its process-global connection (installing for one store would rebind every other
neomodel user in the process), it names constraints after its own convention
(``constraint_unique_Chunk_id``), which would sit next to the Browser-friendly names that
``cypher/schema/constraints.cypher`` gives and that operators query, and it cannot express
the rest of the schema at all: vector dimensions known only at run time (they come from the
embedder), a full-text index over two properties (``Entity.name`` + ``description``),
composite namespace indexes and relationship-property indexes. So ``cypher/schema/`` holds
the whole schema in one place; ``tests/test_models.py`` checks these classes agree with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from neomodel import (
    ArrayProperty,
    FloatProperty,
    IntegerProperty,
    RelationshipFrom,
    RelationshipTo,
    StringProperty,
    StructuredNode,
    StructuredRel,
    db,
)

if TYPE_CHECKING:
    from .store import Neo4jStore

__all__ = [
    "Chunk",
    "ChunkRelation",
    "Community",
    "Document",
    "Entity",
    "EntityRelation",
    "Mention",
    "bind_neomodel",
]


class ChunkRelation(StructuredRel):
    """``(:Chunk)-[:RELATES_TO]->(:Chunk)``: a chunk-to-chunk edge."""

    uid = StringProperty(db_property="id")
    relation = StringProperty()
    weight = FloatProperty()
    description = StringProperty()
    origin = StringProperty()


class Mention(StructuredRel):
    count = IntegerProperty()


class EntityRelation(StructuredRel):
    """``(:Entity)-[:RELATED_TO]->(:Entity)``: entity relationships and triples."""

    type = StringProperty()
    weight = FloatProperty()
    description = StringProperty()
    sequence = IntegerProperty()
    metadata = StringProperty()


class Document(StructuredNode):
    uid = StringProperty(db_property="id", unique_index=True, required=True)
    namespace = StringProperty(index=True)
    source = StringProperty()
    title = StringProperty()
    content = StringProperty()
    content_hash = StringProperty()
    created_at = IntegerProperty()
    metadata = StringProperty()

    chunks = RelationshipTo("Chunk", "HAS_CHUNK")


class Chunk(StructuredNode):
    uid = StringProperty(db_property="id", unique_index=True, required=True)
    namespace = StringProperty(index=True)
    document_id = StringProperty(index=True)
    chunk_index = IntegerProperty()
    parent_id = StringProperty()
    content = StringProperty()
    embedding = ArrayProperty(FloatProperty())
    token_count = IntegerProperty()
    source = StringProperty()
    created_at = IntegerProperty()
    metadata = StringProperty()

    document = RelationshipFrom("Document", "HAS_CHUNK")
    parent = RelationshipTo("Chunk", "CHILD_OF")
    children = RelationshipFrom("Chunk", "CHILD_OF")
    relates_to = RelationshipTo("Chunk", "RELATES_TO", model=ChunkRelation)
    related_from = RelationshipFrom("Chunk", "RELATES_TO", model=ChunkRelation)
    mentions = RelationshipTo("Entity", "MENTIONS", model=Mention)


class Entity(StructuredNode):
    uid = StringProperty(db_property="id", unique_index=True, required=True)
    namespace = StringProperty(index=True)
    name = StringProperty()
    name_key = StringProperty()
    type = StringProperty()
    description = StringProperty()
    embedding = ArrayProperty(FloatProperty())
    source_chunk_id = StringProperty()

    mentioned_in = RelationshipFrom("Chunk", "MENTIONS", model=Mention)
    related_to = RelationshipTo("Entity", "RELATED_TO", model=EntityRelation)
    related_from = RelationshipFrom("Entity", "RELATED_TO", model=EntityRelation)
    communities = RelationshipTo("Community", "IN_COMMUNITY")


class Community(StructuredNode):
    uid = StringProperty(db_property="id", unique_index=True, required=True)
    namespace = StringProperty(index=True)
    level = IntegerProperty()
    title = StringProperty()
    summary = StringProperty()
    full_content = StringProperty()
    rank = FloatProperty()
    size = IntegerProperty()

    members = RelationshipFrom("Entity", "IN_COMMUNITY")
    parent = RelationshipTo("Community", "PARENT")
    children = RelationshipFrom("Community", "PARENT")


def bind_neomodel(store: Neo4jStore) -> None:
    """Make neomodel use the store's driver (and database). neomodel's connection is
    process-wide: bind once, to the store whose graph you want to navigate."""
    db.set_connection(driver=store.driver)
    if store.database:
        db._database_name = store.database
