// A page of the namespace's names, by key, and whether they lack the words of their key (made
// before names carried them; entity_graph/set_name_words gives them).
// mode: read
// params:
//   $namespace  STRING   tenant
//   $after      STRING   the last key of the previous page ('' for the first)
//   $limit      INTEGER  page size
// returns: key STRING, missing BOOLEAN
// browser: :params {namespace: 'demo', after: '', limit: 1000}
MATCH (n:EntityName)
WHERE n.namespace = $namespace AND n.key > $after
RETURN n.key AS key, n.first IS NULL OR n.words IS NULL AS missing
ORDER BY key
LIMIT toInteger($limit)
