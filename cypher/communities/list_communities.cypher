// Communities of a namespace (one level, or all), by level then rank, with their live member
// count and parent. Communities that lost every member (their entities were deleted with
// their documents) are not listed; prune_empty removes them.
// mode: read
// params:
//   $namespace  STRING   tenant
//   $level      INTEGER  only this level (null = all)
//   $limit      INTEGER  most rows to return
// returns: community MAP, members INTEGER, parent_id STRING
// browser: :params {namespace: 'demo', level: null, limit: 100}
MATCH (m:Community {namespace: $namespace})
WHERE $level IS NULL OR m.level = $level
WITH m, COUNT { (:Entity)-[:IN_COMMUNITY]->(m) } AS members
WHERE members > 0
ORDER BY m.level, m.rank DESC, m.id
LIMIT toInteger($limit)
OPTIONAL MATCH (m)-[:PARENT]->(p:Community)
RETURN m {.id, .level, .title, .summary, .full_content, .rank, .rating, .size, .stale, .reported_at} AS community,
       members, p.id AS parent_id
