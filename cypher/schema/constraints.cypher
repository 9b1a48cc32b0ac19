// Uniqueness constraints on every id, plus the range indexes every namespaced lookup uses
// (entity_staged finds the entities of an entity build that is not finished yet; the
// entity_name_* and *_dirty/changed ones are how the maintained entity graph finds its work).
// No index on RELATES_TO.relation: nothing looks edges up by kind, and the planner would
// otherwise pick it for the MERGE in graph/store_edges and scan every edge of a kind.
// Ids already embed the namespace (see kgrag_neo4j/ids.py), so one constraint per label is enough.
// mode: schema
// params: none
// returns: nothing
// browser: (no parameters)
CREATE CONSTRAINT document_id IF NOT EXISTS FOR (d:Document) REQUIRE d.id IS UNIQUE;
CREATE CONSTRAINT chunk_id IF NOT EXISTS FOR (c:Chunk) REQUIRE c.id IS UNIQUE;
CREATE CONSTRAINT entity_id IF NOT EXISTS FOR (e:Entity) REQUIRE e.id IS UNIQUE;
CREATE CONSTRAINT community_id IF NOT EXISTS FOR (m:Community) REQUIRE m.id IS UNIQUE;
CREATE CONSTRAINT kgrag_meta_key IF NOT EXISTS FOR (k:KgragMeta) REQUIRE k.key IS UNIQUE;
CREATE INDEX document_namespace IF NOT EXISTS FOR (d:Document) ON (d.namespace, d.source);
CREATE INDEX chunk_namespace IF NOT EXISTS FOR (c:Chunk) ON (c.namespace);
CREATE INDEX chunk_document IF NOT EXISTS FOR (c:Chunk) ON (c.document_id);
CREATE INDEX entity_namespace_name IF NOT EXISTS FOR (e:Entity) ON (e.namespace, e.name_key);
CREATE INDEX community_namespace IF NOT EXISTS FOR (m:Community) ON (m.namespace, m.level);
CREATE INDEX entity_staged IF NOT EXISTS FOR (e:Entity) ON (e.staged_namespace);
CREATE INDEX related_to_type IF NOT EXISTS FOR ()-[r:RELATED_TO]-() ON (r.type);
CREATE CONSTRAINT entity_name_id IF NOT EXISTS FOR (n:EntityName) REQUIRE n.id IS UNIQUE;
CREATE INDEX entity_name_key IF NOT EXISTS FOR (n:EntityName) ON (n.namespace, n.key);
CREATE INDEX entity_name_mark IF NOT EXISTS FOR (n:EntityName) ON (n.mark);
CREATE INDEX entity_name_first IF NOT EXISTS FOR (n:EntityName) ON (n.namespace, n.first);
CREATE INDEX entity_dirty IF NOT EXISTS FOR (e:Entity) ON (e.dirty);
CREATE INDEX chunk_links_dirty IF NOT EXISTS FOR (c:Chunk) ON (c.links_dirty);
CREATE INDEX chunk_relink IF NOT EXISTS FOR (c:Chunk) ON (c.relink);
CREATE INDEX related_to_changed IF NOT EXISTS FOR ()-[r:RELATED_TO]-() ON (r.changed)
