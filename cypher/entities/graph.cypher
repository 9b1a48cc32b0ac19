// The whole entity graph of a namespace in one read: one row per entity with its outgoing
// weighted RELATED_TO relationships (for Leiden in Python and PageRank). Edges are positional
// lists, [target_id, type, weight, description, sequence]: a graph of 100k+ edges decodes
// several times faster in the driver than the same edges as maps.
// mode: read
// params:
//   $namespace  STRING  tenant
// returns: entity MAP, edges LIST<LIST<ANY>>
// browser: :params {namespace: 'demo'}
MATCH (e:Entity)
USING INDEX e:Entity(namespace, name_key)
WHERE e.namespace = $namespace AND e.name_key IS NOT NULL
RETURN e {.id, .name, .type, .description, .source_chunk_id} AS entity,
       [(e)-[r:RELATED_TO]->(t:Entity) WHERE t.namespace = $namespace |
        [t.id, r.type, r.weight, r.description, r.sequence]] AS edges
