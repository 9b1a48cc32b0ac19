// Delete a document, its chunks (and with them their RELATES_TO, CHILD_OF and MENTIONS
// relationships), then the entities that no chunk mentions any more.
// mode: write
// params:
//   $namespace    STRING  tenant
//   $document_id  STRING  document id
// returns: documents INTEGER, chunks INTEGER, entities INTEGER
// browser: :params {namespace: 'demo', document_id: 'doc_...'}
// Document ids: documents/list_documents (the example names none, so pasting it deletes nothing).
MATCH (d:Document {id: $document_id, namespace: $namespace})
// the write lock first: a replace in flight (which holds it) commits before the chunks are read,
// so chunks it adds are deleted too instead of being left without a document
SET d.deleting = true
WITH d
OPTIONAL MATCH (d)-[:HAS_CHUNK]->(c:Chunk)
OPTIONAL MATCH (c)-[:MENTIONS]->(e:Entity)
WITH d, collect(DISTINCT c) AS chunks, collect(DISTINCT e) AS entities
CALL (chunks) {
  UNWIND chunks AS c
  DETACH DELETE c
}
DETACH DELETE d
WITH chunks, entities
CALL (entities) {
  UNWIND entities AS e
  WITH e WHERE NOT EXISTS { (e)<-[:MENTIONS]-(:Chunk) }
  DETACH DELETE e
  RETURN count(e) AS orphaned
}
RETURN 1 AS documents, size(chunks) AS chunks, orphaned AS entities
