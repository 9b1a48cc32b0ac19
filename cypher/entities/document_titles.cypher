// The title of each document of the namespace (or of some of them) and its first leaf chunk:
// what entity linking reads to make document titles names, and to link the chunk that opens
// a document to the name of its title.
// mode: read
// params:
//   $namespace     STRING        tenant
//   $document_ids  LIST<STRING>  only these documents (null = all)
// returns: document_id STRING, title STRING, first_chunk_id STRING
// browser: :params {namespace: 'demo', document_ids: null}
MATCH (d:Document {namespace: $namespace})
WHERE ($document_ids IS NULL OR d.id IN $document_ids) AND trim(coalesce(d.title, '')) <> ''
CALL (d) {
  MATCH (d)-[:HAS_CHUNK]->(c:Chunk)
  WHERE NOT EXISTS { (:Chunk)-[:CHILD_OF]->(c) }
  RETURN c.id AS first_chunk_id ORDER BY c.chunk_index, c.id LIMIT 1
}
RETURN d.id AS document_id, d.title AS title, first_chunk_id
ORDER BY document_id
