"""neomodel classes navigate what the library stored, and agree with cypher/schema."""

from __future__ import annotations

from kgrag_neo4j.ingestion.ingestor import Ingestor
from kgrag_neo4j.models import Chunk, Community, Document, Entity, bind_neomodel
from kgrag_neo4j.types import ChunkEdge, RelationType


def test_navigate_documents_and_chunks_as_objects(store, hashing_embedder):
    text = "\n\n".join(f"Part {i}. " + "Some words here. " * 60 for i in range(4))
    r = Ingestor(store, hashing_embedder).ingest_text(text, "nav.txt", "Nav")
    chunks = store.list_document_chunks(r.document_id)
    store.store_edges([ChunkEdge(chunks[0].id, chunks[1].id, RelationType.ELABORATES, 0.7, "why")])
    bind_neomodel(store)
    doc = Document.nodes.get(uid=r.document_id)
    assert doc.title == "Nav" and doc.namespace == store.namespace
    got = sorted(doc.chunks.all(), key=lambda c: c.chunk_index)
    assert [c.uid for c in got] == [c.id for c in chunks]
    first = Chunk.nodes.get(uid=chunks[0].id)
    (target,) = first.relates_to.all()
    assert target.uid == chunks[1].id
    assert first.relates_to.relationship(target).relation == "elaborates"
    assert first.document.single().uid == r.document_id


def test_unique_properties_match_the_installed_constraints(store, driver):
    records, _, _ = driver.execute_query(
        "SHOW CONSTRAINTS YIELD labelsOrTypes, properties, type WHERE type = 'UNIQUENESS' "
        "RETURN labelsOrTypes[0] AS label, properties[0] AS property"
    )
    installed = {(r["label"], r["property"]) for r in records}
    for model in (Document, Chunk, Entity, Community):
        unique = {
            prop.get_db_property_name(name)
            for name, prop in model.defined_properties(rels=False, aliases=False).items()
            if prop.unique_index
        }
        assert {(model.__label__, p) for p in unique} <= installed
