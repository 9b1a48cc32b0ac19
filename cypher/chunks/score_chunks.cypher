// How close each given chunk of the namespace is to a query vector: Neo4j's normalised
// cosine, (1 + cos) / 2, in [0, 1] (what the vector index returns). Chunks without an
// embedding (parents of parent-child chunking) are left out.
// mode: read
// params:
//   $namespace  STRING        tenant
//   $embedding  LIST<FLOAT>   query vector
//   $ids        LIST<STRING>  chunk ids
// returns: chunk_id STRING, score FLOAT
// browser: :params {namespace: 'demo', embedding: [0.1, 0.2], ids: []}
UNWIND $ids AS id
MATCH (c:Chunk {id: id})
WHERE c.namespace = $namespace AND c.embedding IS NOT NULL
RETURN c.id AS chunk_id, vector.similarity.cosine(c.embedding, $embedding) AS score
