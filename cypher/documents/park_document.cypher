// The last step of deleting a large document (documents/delete_document does a small one in
// one transaction): its chunks are parked out of the namespace (no reader sees them from
// here on; documents/purge_staged_chunks then deletes them in bounded transactions) and the
// document goes. Returns the ids of the entities its chunks mention, for the orphan check
// after the purge (entities/delete_orphans).
// mode: write
// params:
//   $namespace    STRING  tenant
//   $document_id  STRING  the document
// returns: chunks INTEGER, entity_ids LIST<STRING>
// browser: :params {namespace: 'demo', document_id: 'doc_44baee2d8286fcbe2de5746f8d66be0f'}
MATCH (d:Document {id: $document_id, namespace: $namespace})
CALL (d) {
  MATCH (d)-[h:HAS_CHUNK]->(c:Chunk)
  WHERE c.namespace = $namespace
  DELETE h
  SET c.namespace = '\u001f' + $namespace + '\u001f' + $document_id
  RETURN count(c) AS chunks
}
CALL () {
  MATCH (c:Chunk {namespace: '\u001f' + $namespace + '\u001f' + $document_id})-[:MENTIONS]->(e:Entity)
  RETURN collect(DISTINCT e.id) AS entity_ids
}
DETACH DELETE d
RETURN chunks, entity_ids
