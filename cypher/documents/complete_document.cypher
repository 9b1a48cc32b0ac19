// Give a document its final content hash once the writes that follow its transaction (the
// database-side similarity edges) are done. Until then it carries a pending hash, so a
// re-ingest after a crash redoes those writes instead of calling the document unchanged.
// A document replaced meanwhile (another hash) is left alone.
// mode: write
// params:
//   $namespace     STRING  tenant
//   $document_id   STRING  document id
//   $pending_hash  STRING  the hash the document was stored with
//   $content_hash  STRING  its final hash
// returns: updated INTEGER
// browser: :params {namespace: 'demo', document_id: 'doc_44baee2d8286fcbe2de5746f8d66be0f', pending_hash: 'h~pending', content_hash: 'h'}
MATCH (d:Document {id: $document_id, namespace: $namespace})
WHERE d.content_hash = $pending_hash
SET d.content_hash = $content_hash
RETURN count(d) AS updated
