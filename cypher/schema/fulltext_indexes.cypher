// Full-text (Lucene, BM25) indexes on chunk text and on entity name + description.
// chunk_content also indexes the chunk's namespace, so a keyword query can name its namespace
// (keyword_lucene_query) and the index answers with that tenant's chunks only. An index made
// before that (content only) is replaced by `kgrag init` (schema/drop_chunk_content first).
// chunk_names holds the chunks of namespaces with an entity graph (label NameScanned, given
// when a chunk is first scanned for names), with the `simple` analyzer: it splits words at
// every character that is not a letter, wherever the entity linker's gazetteer splits them
// and more ("Stark's", "Node.js", "foo_bar"), so a phrase query for a name finds every chunk
// the gazetteer can find it in (a superset: the linker decides). The standard analyzer of
// chunk_content keeps "stark's" one word and would miss it. It is eventually consistent: a
// scan's write does not wait for Lucene, and the one reader waits for it
// (entity_graph/await_names_index).
// mode: schema
// params: none
// returns: nothing
// browser: (no parameters)
CREATE FULLTEXT INDEX chunk_content IF NOT EXISTS FOR (c:Chunk) ON EACH [c.content, c.namespace];
CREATE FULLTEXT INDEX entity_text IF NOT EXISTS FOR (e:Entity) ON EACH [e.name, e.description];
CREATE FULLTEXT INDEX chunk_names IF NOT EXISTS FOR (c:NameScanned) ON EACH [c.content, c.namespace]
  OPTIONS {indexConfig: {`fulltext.analyzer`: 'simple', `fulltext.eventually_consistent`: true}}
