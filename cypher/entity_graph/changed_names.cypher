// Names that entered or left the vocabulary since the maintainer last looked (see
// entity_graph/apply_scans and unlink_chunks): the older documents that write a new name, and
// those that mentioned a name that left, are linked again. `marked` counts the name's marks:
// the mark is cleared only if no other ingest marked it again meanwhile. `changed`: the forms
// whose writers to link again (a form a vocabulary name gained or lost), null for every form
// and the name itself (it entered or left).
// mode: read
// params:
//   $namespace  STRING   tenant
//   $limit      INTEGER  most names
// returns: key STRING, entered BOOLEAN, forms LIST<STRING>, changed LIST<STRING>, marked INTEGER
// browser: :params {namespace: 'demo', limit: 1000}
MATCH (n:EntityName)
USING INDEX n:EntityName(mark)
WHERE n.mark IS NOT NULL AND n.namespace = $namespace
RETURN n.key AS key, n.mark = 'entered' AS entered, n.forms AS forms, n.mark_forms AS changed, coalesce(n.marked, 0) AS marked
ORDER BY key
LIMIT toInteger($limit)
