// The chunk each given entity was first found in (its source_chunk_id), when it still exists.
// mode: read
// params:
//   $namespace  STRING        tenant
//   $ids        LIST<STRING>  entity ids
// returns: entity_id STRING, chunk MAP
// browser: :params {namespace: 'demo', ids: ['ent_dfc16d04a9fa34631a36ebe4549733e0']}
UNWIND $ids AS id
MATCH (e:Entity {id: id})
WHERE e.namespace = $namespace AND e.source_chunk_id IS NOT NULL
MATCH (c:Chunk {id: e.source_chunk_id})
WHERE c.namespace = $namespace
RETURN e.id AS entity_id,
       c {.id, .document_id, .content, .chunk_index, .parent_id, .token_count, .metadata,
          .namespace, .source, .created_at} AS chunk
