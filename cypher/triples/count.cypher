// How many triples (RELATED_TO edges with origin 'triple') the namespace holds.
// mode: read
// params:
//   $namespace  STRING  tenant
// returns: triples INTEGER
// browser: :params {namespace: 'demo'}
MATCH (s:Entity)-[r:RELATED_TO {origin: 'triple'}]->(:Entity)
USING INDEX s:Entity(namespace, name_key)
WHERE s.namespace = $namespace AND s.name_key IS NOT NULL
RETURN count(r) AS triples
