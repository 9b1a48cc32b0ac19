// Create or update the document node and drop its chunks that the new version no longer has
// (chunks whose id is unchanged keep their edges and mentions).
// mode: write
// params:
//   $document   MAP           {id, namespace, source, title, content, content_hash, created_at, metadata}
//   $chunk_ids  LIST<STRING>  ids of every chunk of the new version
// returns: removed INTEGER
// browser: :params {document: {id: 'doc_1', namespace: 'default', source: 'a.txt', title: 'A', content: 'x', content_hash: 'h', created_at: 0, metadata: '{}'}, chunk_ids: []}
MERGE (d:Document {id: $document.id})
SET d += $document
WITH d
OPTIONAL MATCH (d)-[:HAS_CHUNK]->(old:Chunk)
WHERE NOT old.id IN $chunk_ids
DETACH DELETE old
RETURN count(old) AS removed
