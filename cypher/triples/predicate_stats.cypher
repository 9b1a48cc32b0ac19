// Triples of the namespace by predicate, most used first.
// mode: read
// params:
//   $namespace  STRING  tenant
// returns: predicate STRING, triples INTEGER
// browser: :params {namespace: 'demo'}
MATCH (s:Entity)-[r:RELATED_TO {origin: 'triple'}]->(:Entity)
USING INDEX s:Entity(namespace, name_key)
WHERE s.namespace = $namespace AND s.name_key IS NOT NULL
RETURN r.type AS predicate, count(r) AS triples
ORDER BY triples DESC, predicate
