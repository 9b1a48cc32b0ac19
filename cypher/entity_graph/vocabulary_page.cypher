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
// only the forms some chunk still writes (a deleted document's forms stay counted at 0)
RETURN n.key AS key, [i IN range(0, size(n.forms) - 1) WHERE n.given OR n.form_counts[i] > 0 | n.forms[i]] AS forms,
       [i IN range(0, size(n.forms) - 1) WHERE n.given OR n.form_counts[i] > 0 | n.form_counts[i]] AS form_counts
ORDER BY key
LIMIT toInteger($limit)
