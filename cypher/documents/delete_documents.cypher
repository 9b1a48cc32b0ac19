// Delete several documents of the namespace in one transaction (documents/delete_document
// deletes one): their chunks with every relationship on them, then the entities no chunk
// mentions any more and no triple uses. Returns the ids of the documents deleted (ids that
// are no document of the namespace are left out).
// mode: write
// params:
//   $namespace     STRING        tenant
//   $document_ids  LIST<STRING>  the documents
// returns: deleted LIST<STRING>, chunks INTEGER, entities INTEGER
// browser: :params {namespace: 'demo', document_ids: ['doc_44baee2d8286fcbe2de5746f8d66be0f']}
UNWIND $document_ids AS id
MATCH (d:Document {id: id, namespace: $namespace})
SET d.deleting = true
WITH d
OPTIONAL MATCH (d)-[:HAS_CHUNK]->(c:Chunk)
OPTIONAL MATCH (c)-[:MENTIONS]->(e:Entity)
WITH collect(DISTINCT d) AS documents, collect(DISTINCT c) AS chunks, collect(DISTINCT e) AS entities
WITH [d IN documents | d.id] AS deleted, documents, chunks, entities
CALL (chunks) {
  UNWIND chunks AS c
  DETACH DELETE c
}
CALL (documents) {
  UNWIND documents AS d
  DETACH DELETE d
}
CALL (entities) {
  UNWIND entities AS e
  WITH e WHERE NOT EXISTS { (e)<-[:MENTIONS]-(:Chunk) }
    AND NOT EXISTS { (e)-[:RELATED_TO {origin: 'triple'}]-(:Entity) }
  DETACH DELETE e
  RETURN count(e) AS orphaned
}
RETURN deleted, size(chunks) AS chunks, orphaned AS entities
