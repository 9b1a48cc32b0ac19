// Vector indexes (cosine, unquantized: scores are exact, so the index and the exact-scan
// fallback agree) on chunk and entity embeddings. Dimensions are known only at run
// time (they come from the embedder), which is why this lives here and not in neomodel.
// mode: schema
// params:
//   $dimensions  INTEGER  length of every embedding vector
// returns: nothing
// browser: :params {dimensions: 256}
CREATE VECTOR INDEX chunk_embedding IF NOT EXISTS
FOR (c:Chunk) ON (c.embedding)
OPTIONS {indexConfig: {`vector.dimensions`: toInteger($dimensions), `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CREATE VECTOR INDEX entity_embedding IF NOT EXISTS
FOR (e:Entity) ON (e.embedding)
OPTIONS {indexConfig: {`vector.dimensions`: toInteger($dimensions), `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}}
