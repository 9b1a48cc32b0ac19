// One community with its report, parent, children and member entities (by mentions).
// mode: read
// params:
//   $namespace     STRING  tenant
//   $community_id  STRING  community id
// returns: community MAP, parent_id STRING, child_ids LIST<STRING>, members LIST<MAP>
// browser: :params {namespace: 'demo', community_id: 'com_...'}
// Community ids: communities/list_communities.
MATCH (m:Community {id: $community_id})
WHERE m.namespace = $namespace
OPTIONAL MATCH (m)-[:PARENT]->(p:Community)
CALL (m) {
  MATCH (e:Entity)-[:IN_COMMUNITY]->(m)
  WITH e, COUNT { (:Chunk)-[:MENTIONS]->(e) } AS mentions
  ORDER BY mentions DESC, e.name, e.id
  RETURN collect({id: e.id, name: e.name, type: e.type, mentions: mentions}) AS members
}
RETURN m {.id, .level, .title, .summary, .full_content, .rank, .rating, .size, .stale, .reported_at} AS community,
       p.id AS parent_id,
       [(c:Community)-[:PARENT]->(m) | c.id] AS child_ids,
       members
