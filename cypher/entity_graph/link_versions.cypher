// Inside a write of documents' entity links: each document's content hash and count of link
// writes now, and the count of link writes of each chunk written as the difference from the
// links it held (`links_written`), to check that nothing changed them since they were read
// (another ingest or delete): the write is then computed again.
// mode: read
// params:
//   $namespace     STRING        tenant
//   $document_ids  LIST<STRING>  documents
//   $chunk_ids     LIST<STRING>  chunks written as a difference
// returns: documents LIST<MAP>, chunks LIST<MAP>
// browser: :params {namespace: 'demo', document_ids: ['doc_44baee2d8286fcbe2de5746f8d66be0f'], chunk_ids: []}
CALL () {
  UNWIND $document_ids AS id
  MATCH (d:Document {id: id})
  WHERE d.namespace = $namespace
  RETURN collect({id: d.id, content_hash: d.content_hash, links_version: coalesce(d.links_version, 0)}) AS documents
}
CALL () {
  UNWIND $chunk_ids AS id
  MATCH (c:Chunk {id: id})
  WHERE c.namespace = $namespace
  RETURN collect({id: c.id, links_written: coalesce(c.links_written, 0)}) AS chunks
}
RETURN documents, chunks
