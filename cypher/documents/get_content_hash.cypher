// The stored content hash of a document of the namespace, or no row when the id is free.
// Run inside the write transaction of store_document so "unchanged" is decided on what that
// transaction sees. An id taken by another namespace answers with owned = false and no hash:
// the caller refuses it, and nothing of the other tenant is read.
// mode: read
// params:
//   $namespace    STRING  tenant
//   $document_id  STRING  document id
// returns: content_hash STRING, owned BOOLEAN
// browser: :params {namespace: 'demo', document_id: 'doc_...'}
MATCH (d:Document {id: $document_id})
RETURN CASE WHEN d.namespace = $namespace THEN d.content_hash END AS content_hash,
       d.namespace = $namespace AS owned
