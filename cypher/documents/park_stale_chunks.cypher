// The publishing step of a large document, after its new chunks are in: take the chunks of
// the old version that the new one no longer has out of the tenant (into the document's
// staging namespace) instead of deleting them in this transaction, which may be too large
// for it; documents/purge_staged_chunks deletes them in small transactions afterwards.
// mode: write
// params:
//   $namespace    STRING  tenant
//   $staging      STRING  the document's staging namespace
//   $document_id  STRING  document id
// returns: parked INTEGER
// browser: :params {namespace: 'demo', staging: '\u001fdemo\u001fdoc_44baee2d8286fcbe2de5746f8d66be0f', document_id: 'doc_44baee2d8286fcbe2de5746f8d66be0f'}
MATCH (d:Document {id: $document_id})-[h:HAS_CHUNK]->(old:Chunk)
WHERE d.namespace = $namespace AND (old.document_hash IS NULL OR old.document_hash <> d.content_hash)
DELETE h
SET old.namespace = $staging
RETURN count(old) AS parked
