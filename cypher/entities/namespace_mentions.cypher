// Every chunk-to-entity mention of the namespace, as (chunk id, entity ids): what linking
// chunks through shared entities reads.
// mode: read
// params:
//   $namespace  STRING  tenant
// returns: chunk_id STRING, entity_ids LIST<STRING>
// browser: :params {namespace: 'demo'}
MATCH (c:Chunk {namespace: $namespace})-[:MENTIONS]->(e:Entity)
WHERE e.namespace = $namespace
RETURN c.id AS chunk_id, collect(e.id) AS entity_ids
ORDER BY chunk_id
