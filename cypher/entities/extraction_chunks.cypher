// The chunks entity extraction reads, in one query: the leaf chunks with text of the
// namespace's documents (or of some of them), in ingestion order. Parents of parent-child
// chunking are left out: they repeat their children's text, so every mention would count
// twice. Chunks no document owns any more are left out too, and with $skip_key the chunks a
// model already read with that model and schema (entities/mark_extracted), so a re-run sends
// only new text to the model.
// mode: read
// params:
//   $namespace     STRING        tenant
//   $document_ids  LIST<STRING>  only these documents (null = all)
//   $skip_key      STRING        leave out chunks extracted with this key (null = none)
// returns: chunk MAP
// browser: :params {namespace: 'demo', document_ids: ['doc_44baee2d8286fcbe2de5746f8d66be0f'], skip_key: null}
MATCH (c:Chunk {namespace: $namespace})
WHERE ($document_ids IS NULL OR c.document_id IN $document_ids)
  AND trim(coalesce(c.content, '')) <> ''
  AND ($skip_key IS NULL OR coalesce(c.extracted_by, '') <> $skip_key)
  AND NOT EXISTS { (:Chunk)-[:CHILD_OF]->(c) }
  AND EXISTS { (:Document)-[:HAS_CHUNK]->(c) }
RETURN c {.id, .document_id, .content, .chunk_index, .parent_id, .token_count, .source, .created_at} AS chunk
ORDER BY c.created_at, c.document_id, c.chunk_index, c.id
