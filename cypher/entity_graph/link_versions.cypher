// Inside a write of documents' entity links: each document's content hash and count of link
// writes now, to check that nothing changed them since their links were read (another ingest
// or delete): the write is then computed again.
// mode: read
// params:
//   $namespace     STRING        tenant
//   $document_ids  LIST<STRING>  documents
// returns: id STRING, content_hash STRING, links_version INTEGER
// browser: :params {namespace: 'demo', document_ids: ['doc_44baee2d8286fcbe2de5746f8d66be0f']}
UNWIND $document_ids AS id
MATCH (d:Document {id: id})
WHERE d.namespace = $namespace
RETURN d.id AS id, d.content_hash AS content_hash, coalesce(d.links_version, 0) AS links_version
