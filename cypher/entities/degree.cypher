// Degree centrality: how many RELATED_TO relationships each entity of the namespace has
// (both directions, to entities of the namespace).
// mode: read
// params:
//   $namespace  STRING  tenant
// returns: entity_id STRING, degree INTEGER
// browser: :params {namespace: 'demo'}
MATCH (e:Entity)
USING INDEX e:Entity(namespace, name_key)
WHERE e.namespace = $namespace AND e.name_key IS NOT NULL
RETURN e.id AS entity_id, COUNT { (e)-[:RELATED_TO]-(o:Entity) WHERE o.namespace = $namespace } AS degree
