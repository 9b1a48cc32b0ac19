"""``neo4j://`` routing URIs: reads go with read routing, the database name is honoured."""

from __future__ import annotations

import pytest

from kgrag_neo4j.errors import DatabaseNotFound
from kgrag_neo4j.settings import Neo4jSettings
from kgrag_neo4j.store import Neo4jStore
from kgrag_neo4j.types import Chunk, Document


def test_routing_uri_reads_and_writes(neo4j_settings, schema_ready, namespace, hashing_embedder):
    if not neo4j_settings.uri.startswith("bolt://"):
        pytest.skip("the routing variant is derived from a bolt:// test server")
    routed = neo4j_settings.with_(uri="neo4j://" + neo4j_settings.uri.removeprefix("bolt://"))
    assert routed.routing
    with Neo4jStore.connect(routed, namespace=namespace) as store:
        doc = Document(id="r-" + namespace, source="r.txt", content="routed", content_hash="h")
        store.store_document(
            doc,
            [
                Chunk(
                    id="r-c-" + namespace,
                    document_id=doc.id,
                    content="routed text",
                    embedding=hashing_embedder.embed(["routed text"])[0],
                )
            ],
        )
        assert [r.content for r in store.search_chunks(hashing_embedder.embed(["routed text"])[0], 1)] == ["routed text"]


def test_database_name_is_honoured(neo4j_settings, schema_ready):
    settings = Neo4jSettings(
        uri=neo4j_settings.uri, user=neo4j_settings.user, password=neo4j_settings.password, database="nosuchdb"
    )
    with pytest.raises(DatabaseNotFound, match="nosuchdb"):
        Neo4jStore.connect(settings)
