// Full-text (Lucene, BM25) indexes on chunk text and on entity name + description.
// chunk_content also indexes the chunk's namespace, so a keyword query can name its namespace
// (keyword_lucene_query) and the index answers with that tenant's chunks only. An index made
// before that (content only) is replaced by `kgrag init` (schema/drop_chunk_content first).
// mode: schema
// params: none
// returns: nothing
// browser: (no parameters)
CREATE FULLTEXT INDEX chunk_content IF NOT EXISTS FOR (c:Chunk) ON EACH [c.content, c.namespace];
CREATE FULLTEXT INDEX entity_text IF NOT EXISTS FOR (e:Entity) ON EACH [e.name, e.description]
