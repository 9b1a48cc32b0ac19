// Triples whose object has the given (normalised) name: the OSP / POS directions ("what
// points to X", "what has predicate P targeting X"). The object is found with the
// entity_namespace_name index (hinted, as in query_by_subject), its triples by expanding
// its incoming relationships.
// mode: read
// params:
//   $namespace   STRING   tenant
//   $object_key  STRING   normalise_name(object)
//   $predicate   STRING   predicate to keep (null = any)
//   $limit       INTEGER  triples returned at most
// returns: subject STRING, subject_type STRING, predicate STRING, object STRING, object_type STRING, weight FLOAT, metadata STRING, created_at INTEGER
// browser: :params {namespace: 'demo', object_key: 'tool:http_client', predicate: null, limit: 100}
MATCH (s:Entity)-[r:RELATED_TO {origin: 'triple'}]->(o:Entity {namespace: $namespace, name_key: $object_key})
USING INDEX o:Entity(namespace, name_key)
WHERE $predicate IS NULL OR r.type = $predicate
RETURN s.name AS subject, s.type AS subject_type, r.type AS predicate, o.name AS object,
       o.type AS object_type, r.weight AS weight, r.metadata AS metadata, r.created_at AS created_at
ORDER BY subject, predicate, object
LIMIT toInteger($limit)
