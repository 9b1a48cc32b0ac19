// How close each given chunk of the namespace is to a query vector: Neo4j's normalised
// cosine, (1 + cos) / 2, in [0, 1] (what the vector index returns). Chunks without an
// embedding (parents of parent-child chunking) are left out.
// mode: read
// params:
//   $namespace  STRING        tenant
//   $embedding  LIST<FLOAT>   query vector
//   $ids        LIST<STRING>  chunk ids
//   $vector_property  STRING  property holding the namespace's vectors (its embedding model's; `kgrag cypher params` fills it)
// returns: chunk_id STRING, score FLOAT
// browser: :params {namespace: 'demo', embedding: [], ids: ['chk_...'], vector_property: 'embedding'}
// Chunk ids: chunks/list_document_chunks lists a document's.
// In Browser the query vector comes from the namespace's embedder: `kgrag cypher params chunks/score_chunks --namespace demo --query "..."` prints this line with it.
UNWIND $ids AS id
MATCH (c:Chunk {id: id})
WHERE c.namespace = $namespace AND c[$vector_property] IS NOT NULL
RETURN c.id AS chunk_id, vector.similarity.cosine(c[$vector_property], $embedding) AS score
