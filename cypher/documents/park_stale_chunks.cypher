// The publishing step of a large document, after its new chunks are in: take the chunks of
// the old version that the new one no longer has out of the tenant (into the document's
// staging namespace, '\u001f' + namespace + '\u001f' + document id) instead of deleting them
// in this transaction, which may be too large for it; documents/purge_staged_chunks deletes
// them in small transactions afterwards.
// mode: write
// params:
//   $namespace    STRING  tenant
//   $document_id  STRING  document id
// returns: parked INTEGER
// browser: :params {namespace: 'demo', document_id: 'doc_44baee2d8286fcbe2de5746f8d66be0f'}
MATCH (d:Document {id: $document_id})-[h:HAS_CHUNK]->(old:Chunk)
WHERE d.namespace = $namespace AND (old.document_hash IS NULL OR old.document_hash <> d.content_hash)
DELETE h
SET old.namespace = '\u001f' + $namespace + '\u001f' + $document_id
RETURN count(old) AS parked
