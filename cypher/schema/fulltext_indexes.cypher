// Full-text (Lucene, BM25) indexes on chunk text and on entity name + description.
// mode: schema
// params: none
// returns: nothing
// browser: (no parameters)
CREATE FULLTEXT INDEX chunk_content IF NOT EXISTS FOR (c:Chunk) ON EACH [c.content];
CREATE FULLTEXT INDEX entity_text IF NOT EXISTS FOR (e:Entity) ON EACH [e.name, e.description]
