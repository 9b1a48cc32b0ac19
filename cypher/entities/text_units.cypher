// The chunks (GraphRAG "text units") that mention any of the given entities, with their text
// and token count, most mentions first.
// mode: read
// params:
//   $namespace  STRING        tenant
//   $ids        LIST<STRING>  entity ids
// returns: chunk MAP, entity_ids LIST<STRING>, mentions INTEGER
// browser: :params {namespace: 'demo', ids: ['ent_dfc16d04a9fa34631a36ebe4549733e0']}
UNWIND $ids AS id
MATCH (e:Entity {id: id})
WHERE e.namespace = $namespace
MATCH (c:Chunk)-[m:MENTIONS]->(e)
WHERE c.namespace = $namespace
WITH c, collect(DISTINCT e.id) AS entity_ids, sum(m.count) AS mentions
RETURN c {.id, .document_id, .content, .chunk_index, .parent_id, .token_count, .metadata,
          .namespace, .source, .created_at} AS chunk,
       entity_ids, mentions
ORDER BY mentions DESC, chunk.id
