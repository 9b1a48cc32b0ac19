// Triples with one predicate, whatever their ends: found through the related_to_type
// relationship index (the hint keeps the planner from starting at the Entity label).
// mode: read
// params:
//   $namespace  STRING   tenant
//   $predicate  STRING   predicate
//   $limit      INTEGER  triples returned at most
// returns: subject STRING, subject_type STRING, predicate STRING, object STRING, object_type STRING, weight FLOAT, metadata STRING, created_at INTEGER
// browser: :params {namespace: 'demo', predicate: 'caused_by', limit: 100}
MATCH (s:Entity)-[r:RELATED_TO]->(o:Entity)
USING INDEX r:RELATED_TO(type)
WHERE r.type = $predicate AND r.origin = 'triple' AND r.namespace = $namespace
RETURN s.name AS subject, s.type AS subject_type, r.type AS predicate, o.name AS object,
       o.type AS object_type, r.weight AS weight, r.metadata AS metadata, r.created_at AS created_at
ORDER BY subject, predicate, object
LIMIT toInteger($limit)
