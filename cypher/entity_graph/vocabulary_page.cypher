// A page of the namespace's vocabulary, by key (a full build links every document against
// all of it).
// mode: read
// params:
//   $namespace  STRING   tenant
//   $after      STRING   the last key of the previous page ('' for the first)
//   $limit      INTEGER  page size
// returns: key STRING, forms LIST<STRING>, form_counts LIST<INTEGER>
// browser: :params {namespace: 'demo', after: '', limit: 1000}
MATCH (n:EntityName)
WHERE n.namespace = $namespace AND n.key > $after AND n.accepted
RETURN n.key AS key, n.forms AS forms, n.form_counts AS form_counts
ORDER BY key
LIMIT toInteger($limit)
