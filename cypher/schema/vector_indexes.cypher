// Vector indexes (cosine, unquantized: scores are exact, so the index and the exact-scan
// fallback agree) on chunk and entity embeddings. Dimensions are known only at run
// time (they come from the embedder), which is why this lives here and not in neomodel.
// The HNSW graph has 32 links per node and a build beam of 200 (Neo4j's defaults: 16, 100):
// with the defaults, merged segments left groups of near-identical chunks that no search
// reached (at 100k chunks of real text, 3 of 200 queries got none of their exact top 10 even
// from 600 candidates); with these, recall@10 at 200 candidates is 0.99 and no query falls
// below 0.8, for more build CPU (bench/NOTES.md). An index made before keeps its settings.
// mode: schema
// params:
//   $dimensions  INTEGER  length of every embedding vector
// returns: nothing
// browser: :params {dimensions: 256}
CREATE VECTOR INDEX chunk_embedding IF NOT EXISTS
FOR (c:Chunk) ON (c.embedding)
OPTIONS {indexConfig: {`vector.dimensions`: toInteger($dimensions), `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false,
                        `vector.hnsw.m`: 32, `vector.hnsw.ef_construction`: 200}};
CREATE VECTOR INDEX entity_embedding IF NOT EXISTS
FOR (e:Entity) ON (e.embedding)
OPTIONS {indexConfig: {`vector.dimensions`: toInteger($dimensions), `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false,
                        `vector.hnsw.m`: 32, `vector.hnsw.ef_construction`: 200}}
