// Chunks by id within a namespace, in the order asked; missing ids are skipped.
// mode: read
// params:
//   $namespace  STRING        tenant
//   $ids        LIST<STRING>  chunk ids
// returns: chunk MAP
// browser: :params {namespace: 'demo', ids: ['chk_...']}
// Chunk ids: chunks/list_document_chunks lists a document's.
UNWIND range(0, size($ids) - 1) AS i
MATCH (c:Chunk {id: $ids[i]})
WHERE c.namespace = $namespace
RETURN c {.id, .document_id, .content, .chunk_index, .parent_id, .token_count, .metadata,
          .namespace, .source, .created_at, .document_title} AS chunk
ORDER BY i
