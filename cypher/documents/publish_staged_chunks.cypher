// The publishing step of a large document: in the transaction that writes the document's
// new content hash, move its staged chunks (those of that hash, in the document's staging
// namespace '\u001f' + namespace + '\u001f' + document id) into the tenant, link them to the
// document, and move the edges staged between them too. Readers see the whole new version
// from this commit on, and never a part of it before.
// mode: write
// params:
//   $namespace    STRING  tenant
//   $document_id  STRING  document id
// returns: published INTEGER
// browser: :params {namespace: 'demo', document_id: 'doc_44baee2d8286fcbe2de5746f8d66be0f'}
MATCH (d:Document {id: $document_id})
WHERE d.namespace = $namespace
WITH d, '\u001f' + $namespace + '\u001f' + $document_id AS staging
MATCH (c:Chunk {namespace: staging})
WHERE c.document_hash = d.content_hash
SET c.namespace = $namespace
MERGE (d)-[:HAS_CHUNK]->(c)
WITH c, staging
CALL (c, staging) {
  MATCH (c)-[r:RELATES_TO]->()
  WHERE r.namespace = staging
  SET r.namespace = $namespace
}
RETURN count(c) AS published
