// One document of a namespace with its chunk count.
// mode: read
// params:
//   $namespace    STRING  tenant
//   $document_id  STRING  document id
// returns: document MAP, chunk_count INTEGER
// browser: :params {namespace: 'demo', document_id: 'doc_44baee2d8286fcbe2de5746f8d66be0f'}
MATCH (d:Document {id: $document_id, namespace: $namespace})
RETURN d {.*} AS document, COUNT { (d)-[:HAS_CHUNK]->() } AS chunk_count
