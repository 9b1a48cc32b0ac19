// What the reports of the given communities are made of: each community's level and parent,
// and its live members with their RELATED_TO relationships to other members, as positional
// lists (a large community decodes faster in the driver than as maps):
// [id, name, type, description, source_chunk_id, edges], each edge
// [target_id, type, weight, description, sequence] as entities/graph reads them.
// mode: read
// params:
//   $namespace  STRING        tenant
//   $ids        LIST<STRING>  community ids
// returns: id STRING, level INTEGER, parent_id STRING, members LIST<LIST<ANY>>
// browser: :params {namespace: 'demo', ids: ['com_...']}
// Community ids: communities/stale_page or communities/list_communities.
UNWIND $ids AS id
MATCH (m:Community {id: id})
WHERE m.namespace = $namespace
CALL (m) {
  OPTIONAL MATCH (m)-[:PARENT]->(p:Community)
  WHERE p.namespace = $namespace
  RETURN p.id AS parent_id ORDER BY parent_id LIMIT 1
}
CALL (m) {
  MATCH (e:Entity)-[:IN_COMMUNITY]->(m)
  WHERE e.namespace = $namespace
  WITH e ORDER BY e.id
  RETURN collect([e.id, e.name, e.type, e.description, e.source_chunk_id,
                  [(e)-[r:RELATED_TO]->(t:Entity)-[:IN_COMMUNITY]->(m) WHERE t.namespace = $namespace AND t <> e |
                   [t.id, r.type, r.weight, r.description, r.sequence]]]) AS members
}
RETURN m.id AS id, m.level AS level, parent_id, members
