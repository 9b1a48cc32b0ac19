// Every chunk (parents and children) of one document, by chunk index.
// mode: read
// params:
//   $namespace    STRING   tenant
//   $document_id  STRING   document id
//   $with_embedding BOOLEAN  include the embedding (costly for big documents)
//   $vector_property  STRING  property holding the namespace's vectors (its embedding model's; `kgrag cypher params` fills it)
// returns: chunk MAP, embedding LIST<FLOAT>
// browser: :params {namespace: 'demo', document_id: 'doc_44baee2d8286fcbe2de5746f8d66be0f', with_embedding: false, vector_property: 'embedding'}
MATCH (:Document {id: $document_id, namespace: $namespace})-[:HAS_CHUNK]->(c:Chunk)
RETURN c {.id, .document_id, .content, .chunk_index, .parent_id, .token_count, .metadata,
          .namespace, .source, .created_at} AS chunk,
       CASE WHEN $with_embedding THEN c[$vector_property] ELSE null END AS embedding
ORDER BY c.parent_id IS NOT NULL, c.chunk_index, c.id
