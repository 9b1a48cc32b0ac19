// Create or update the document node of the namespace and drop its chunks that the new
// version no longer has (chunks whose id is unchanged keep their edges and mentions).
// An id that belongs to another namespace is left untouched and gives no row.
// mode: write
// params:
//   $namespace  STRING        tenant
//   $document   MAP           {id, source, title, content, content_hash, created_at, metadata}
//   $chunk_ids  LIST<STRING>  ids of every chunk of the new version
// returns: removed INTEGER
// browser: :params {namespace: 'default', document: {id: 'doc_1', source: 'a.txt', title: 'A', content: 'x', content_hash: 'h', created_at: 0, metadata: '{}'}, chunk_ids: []}
MERGE (d:Document {id: $document.id})
  ON CREATE SET d.namespace = $namespace
WITH d WHERE d.namespace = $namespace
SET d += $document, d.namespace = $namespace
WITH d
OPTIONAL MATCH (d)-[:HAS_CHUNK]->(old:Chunk)
WHERE NOT old.id IN $chunk_ids
DETACH DELETE old
RETURN count(old) AS removed
