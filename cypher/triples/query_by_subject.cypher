// Triples whose subject has the given (normalised) name: the SPO direction, also serving
// subject+predicate, subject+object and subject+predicate+object. The subject is found with
// the entity_namespace_name index (hinted: the planner must not fall back to a scan on a
// small or fresh graph) and its triples by expanding its outgoing relationships:
// cost follows the subject's degree, never the size of the graph.
// mode: read
// params:
//   $namespace    STRING   tenant
//   $subject_key  STRING   normalise_name(subject)
//   $predicate    STRING   predicate to keep (null = any)
//   $object_key   STRING   normalise_name(object) to keep (null = any)
//   $limit        INTEGER  triples returned at most
// returns: subject STRING, subject_type STRING, predicate STRING, object STRING, object_type STRING, weight FLOAT, metadata STRING, created_at INTEGER
// browser: :params {namespace: 'demo', subject_key: 'error:timeout', predicate: null, object_key: null, limit: 100}
MATCH (s:Entity {namespace: $namespace, name_key: $subject_key})-[r:RELATED_TO {origin: 'triple'}]->(o:Entity)
USING INDEX s:Entity(namespace, name_key)
WHERE ($predicate IS NULL OR r.type = $predicate)
  AND ($object_key IS NULL OR o.name_key = $object_key)
RETURN s.name AS subject, s.type AS subject_type, r.type AS predicate, o.name AS object,
       o.type AS object_type, r.weight AS weight, r.metadata AS metadata, r.created_at AS created_at
ORDER BY subject, predicate, object
LIMIT toInteger($limit)
