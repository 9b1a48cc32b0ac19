// Mark documents to be linked again as a whole (their entity links were made against a
// vocabulary that has changed since, or the caller asks for it).
// mode: write
// params:
//   $namespace     STRING        tenant
//   $document_ids  LIST<STRING>  documents to link again
// returns: documents INTEGER
// browser: :params {namespace: 'demo', document_ids: []}
UNWIND $document_ids AS id
MATCH (d:Document {id: id})
WHERE d.namespace = $namespace
SET d.entities_hash = null
RETURN count(d) AS documents
