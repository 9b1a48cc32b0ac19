// Every triple of the namespace (no subject, predicate or object given), in SPO order:
// the namespace's entities come from the entity_namespace_name index (every entity a triple
// touches has a name_key), their triples by expansion.
// mode: read
// params:
//   $namespace  STRING   tenant
//   $limit      INTEGER  triples returned at most
// returns: subject STRING, subject_type STRING, predicate STRING, object STRING, object_type STRING, weight FLOAT, metadata STRING, created_at INTEGER
// browser: :params {namespace: 'demo', limit: 100}
MATCH (s:Entity)-[r:RELATED_TO {origin: 'triple'}]->(o:Entity)
USING INDEX s:Entity(namespace, name_key)
WHERE s.namespace = $namespace AND s.name_key IS NOT NULL
RETURN s.name AS subject, s.type AS subject_type, r.type AS predicate, o.name AS object,
       o.type AS object_type, r.weight AS weight, r.metadata AS metadata, r.created_at AS created_at
ORDER BY subject, predicate, object
LIMIT toInteger($limit)
