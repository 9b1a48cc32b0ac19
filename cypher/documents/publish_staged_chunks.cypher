// The publishing step of a large document: in the transaction that writes the document's
// new content hash, move its staged chunks (those of that hash) into the tenant, link them
// to the document, and move the edges staged between them too. Readers see the whole new
// version from this commit on, and never a part of it before.
// mode: write
// params:
//   $namespace    STRING  tenant
//   $staging      STRING  the document's staging namespace
//   $document_id  STRING  document id
// returns: published INTEGER
// browser: :params {namespace: 'demo', staging: '\u001fdemo\u001fdoc_44baee2d8286fcbe2de5746f8d66be0f', document_id: 'doc_44baee2d8286fcbe2de5746f8d66be0f'}
MATCH (d:Document {id: $document_id})
WHERE d.namespace = $namespace
MATCH (c:Chunk {namespace: $staging})
WHERE c.document_hash = d.content_hash
SET c.namespace = $namespace
MERGE (d)-[:HAS_CHUNK]->(c)
WITH c
CALL (c) {
  MATCH (c)-[r:RELATES_TO]->()
  WHERE r.namespace = $staging
  SET r.namespace = $namespace
}
RETURN count(c) AS published
