// Chunk ids among $ids that already belong to another document or namespace: storing them
// would move a chunk between documents, so store_document refuses (and rolls back) instead.
// mode: read
// params:
//   $namespace    STRING        tenant of the document being stored
//   $document_id  STRING        document being stored
//   $ids          LIST<STRING>  its chunk ids
// returns: id STRING, document_id STRING
// browser: :params {namespace: 'demo', document_id: 'doc_44baee2d8286fcbe2de5746f8d66be0f', ids: ['chk_...']}
// Chunk ids: chunks/list_document_chunks lists a document's.
UNWIND $ids AS id
MATCH (c:Chunk {id: id})
WHERE c.document_id <> $document_id OR c.namespace <> $namespace
RETURN c.id AS id, c.document_id AS document_id
LIMIT 5
