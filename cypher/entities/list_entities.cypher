// Entities of a namespace with their mention and relationship counts, most mentioned first.
// mode: read
// params:
//   $namespace  STRING   tenant
//   $limit      INTEGER  most rows to return
// returns: entity MAP, mentions INTEGER, degree INTEGER
// browser: :params {namespace: 'demo', limit: 50}
MATCH (e:Entity)
USING INDEX e:Entity(namespace, name_key)
WHERE e.namespace = $namespace AND e.name_key IS NOT NULL
WITH e, COUNT { (:Chunk)-[:MENTIONS]->(e) } AS mentions
ORDER BY mentions DESC, e.name_key, e.id
LIMIT toInteger($limit)
RETURN e {.id, .name, .type, .description, .source_chunk_id} AS entity, mentions,
       COUNT { (e)-[:RELATED_TO]-(:Entity) } AS degree
