// Every chunk (parents and children) of several documents, by document and chunk index:
// the pages `kgrag edges build` reads.
// mode: read
// params:
//   $namespace       STRING        tenant
//   $document_ids    LIST<STRING>  document ids
//   $with_embedding  BOOLEAN       include the embedding (costly for big documents)
//   $vector_property  STRING  property holding the namespace's vectors (its embedding model's; `kgrag cypher params` fills it)
// returns: chunk MAP, embedding LIST<FLOAT>
// browser: :params {namespace: 'demo', document_ids: ['doc_44baee2d8286fcbe2de5746f8d66be0f'], with_embedding: false, vector_property: 'embedding'}
UNWIND $document_ids AS document_id
MATCH (:Document {id: document_id, namespace: $namespace})-[:HAS_CHUNK]->(c:Chunk)
RETURN c {.id, .document_id, .content, .chunk_index, .parent_id, .token_count, .metadata,
          .namespace, .source, .created_at} AS chunk,
       CASE WHEN $with_embedding THEN c[$vector_property] ELSE null END AS embedding
ORDER BY c.document_id, c.parent_id IS NOT NULL, c.chunk_index, c.id
