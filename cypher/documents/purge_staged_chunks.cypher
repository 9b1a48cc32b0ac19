// Delete up to $limit chunks of a document's staging namespace ('\u001f' + namespace +
// '\u001f' + document id): what a large document's interrupted write left there, or its old
// chunks parked when the new version was published. Run until it deletes nothing; each run
// is one small transaction.
// mode: write
// params:
//   $namespace    STRING   tenant
//   $document_id  STRING   document id
//   $limit        INTEGER  most chunks deleted by this run
// returns: deleted INTEGER
// browser: :params {namespace: 'demo', document_id: 'doc_44baee2d8286fcbe2de5746f8d66be0f', limit: 1000}
MATCH (c:Chunk {namespace: '\u001f' + $namespace + '\u001f' + $document_id})
WITH c LIMIT toInteger($limit)
DETACH DELETE c
RETURN count(c) AS deleted
