// The community reports of the communities the given entities belong to (any level), highest
// rank first (ties: more of the given entities, then lower level), at most $top_k.
// mode: read
// params:
//   $namespace  STRING        tenant
//   $ids        LIST<STRING>  entity ids
//   $top_k      INTEGER       reports returned at most
// returns: community MAP, matched INTEGER
// browser: :params {namespace: 'demo', ids: ['ent_dfc16d04a9fa34631a36ebe4549733e0'], top_k: 3}
UNWIND $ids AS id
MATCH (e:Entity {id: id})-[:IN_COMMUNITY]->(m:Community)
WHERE e.namespace = $namespace AND m.namespace = $namespace
WITH m, count(DISTINCT e) AS matched
ORDER BY m.rank DESC, matched DESC, m.level, m.id
LIMIT toInteger($top_k)
RETURN m {.id, .level, .title, .summary, .full_content, .rank, .rating, .size, .stale, .reported_at} AS community, matched
