// Mark documents as to be linked again (their entity links were made against a vocabulary
// that has changed since), and forget names' entered/left marks once that is recorded; a name
// no chunk writes any more goes then.
// mode: write
// params:
//   $namespace     STRING        tenant
//   $document_ids  LIST<STRING>  documents to link again
//   $keys          LIST<STRING>  names whose marks are handled
// returns: documents INTEGER
// browser: :params {namespace: 'demo', document_ids: [], keys: []}
CALL () {
  UNWIND $keys AS key
  MATCH (n:EntityName {namespace: $namespace, key: key})
  SET n.mark = null
  // a name that left because no chunk writes it any more goes, now that its writers are sent
  // back to linking: a full build never makes it
  WITH n WHERE NOT n.accepted AND NOT n.given AND all(x IN n.form_counts WHERE x <= 0)
  DELETE n
}
UNWIND $document_ids AS id
MATCH (d:Document {id: id})
WHERE d.namespace = $namespace
SET d.entities_hash = null
RETURN count(d) AS documents
