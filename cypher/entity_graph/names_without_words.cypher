// A page of the namespace's names, by key, that do not carry the first word of their key yet
// (made before names did; entity_graph/set_name_words gives it).
// mode: read
// params:
//   $namespace  STRING   tenant
//   $after      STRING   the last key of the previous page ('' for the first)
//   $limit      INTEGER  page size
// returns: key STRING, missing BOOLEAN
// browser: :params {namespace: 'demo', after: '', limit: 1000}
MATCH (n:EntityName)
WHERE n.namespace = $namespace AND n.key > $after
RETURN n.key AS key, n.first IS NULL AS missing
ORDER BY key
LIMIT toInteger($limit)
