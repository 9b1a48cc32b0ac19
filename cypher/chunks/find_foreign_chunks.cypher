// Chunk ids among the rows that already belong to another document or namespace: storing
// them would move a chunk between documents, so the store refuses that document instead.
// A chunk left staged by an interrupted write of the same (large) document (in its staging
// namespace, named from $namespace) is reported as staged: the store clears those and carries on.
// mode: read
// params:
//   $namespace  STRING     tenant of the documents being stored
//   $rows       LIST<MAP>  [{id, document_id}]: chunk ids and the document storing each
// returns: id STRING, document_id STRING, owner STRING, staged BOOLEAN
// browser: :params {namespace: 'demo', rows: [{id: 'chk_...', document_id: 'doc_44baee2d8286fcbe2de5746f8d66be0f'}]}
// Chunk ids: chunks/list_document_chunks lists a document's.
UNWIND $rows AS row
MATCH (c:Chunk {id: row.id})
WHERE c.document_id <> row.document_id OR c.namespace <> $namespace
RETURN c.id AS id, row.document_id AS document_id,
       CASE WHEN c.namespace = $namespace THEN c.document_id ELSE 'another namespace' END AS owner,
       c.namespace = '\u001f' + $namespace + '\u001f' + row.document_id AS staged
