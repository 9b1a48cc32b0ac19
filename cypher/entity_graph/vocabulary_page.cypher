// A page of the namespace's vocabulary, by key (a full build links every document against
// all of it).
// mode: read
// params:
//   $namespace  STRING   tenant
//   $after      STRING   the last key of the previous page ('' for the first)
//   $limit      INTEGER  page size
// returns: key STRING, accepted BOOLEAN, forms LIST<STRING>, form_counts LIST<INTEGER>
// browser: :params {namespace: 'demo', after: '', limit: 1000}
MATCH (n:EntityName)
WHERE n.namespace = $namespace AND n.key > $after
// in the order of the (namespace, key) index, so a page reads its own names only; names not
// in the vocabulary come too (the next page starts after the last key of this one)
WITH n ORDER BY n.namespace, n.key
LIMIT toInteger($limit)
// only the forms some chunk still writes (a deleted document's forms stay counted at 0)
RETURN n.key AS key, n.accepted AS accepted,
       CASE WHEN n.accepted THEN [i IN range(0, size(n.forms) - 1) WHERE n.given OR n.form_counts[i] > 0 | n.forms[i]] ELSE [] END AS forms,
       CASE WHEN n.accepted THEN [i IN range(0, size(n.forms) - 1) WHERE n.given OR n.form_counts[i] > 0 | n.form_counts[i]] ELSE [] END AS form_counts
