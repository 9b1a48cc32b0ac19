// The stored content hash of a document, or no row when it is absent. Run inside the write
// transaction of store_document so "unchanged" is decided on what that transaction sees.
// mode: read
// params:
//   $document_id  STRING  document id
// returns: content_hash STRING, namespace STRING
// browser: :params {document_id: 'doc_...'}
MATCH (d:Document {id: $document_id})
RETURN d.content_hash AS content_hash, d.namespace AS namespace
