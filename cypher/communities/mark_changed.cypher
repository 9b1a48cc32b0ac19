// Mark stale the communities whose live member count no longer matches the size their report
// was written for: members went without their community being told (a deleted entity takes
// its IN_COMMUNITY relationships with it; a cleared entity graph marks nothing). At most
// $limit per transaction; the caller repeats it until it marks none.
// mode: write
// params:
//   $namespace  STRING   tenant
//   $limit      INTEGER  communities marked at most
// returns: marked INTEGER
// browser: :params {namespace: 'demo', limit: 10000}
MATCH (m:Community)
USING INDEX m:Community(namespace, level)
WHERE m.namespace = $namespace AND m.level IS NOT NULL AND NOT coalesce(m.stale, false)
  AND COUNT { ()-[:IN_COMMUNITY]->(m) } <> coalesce(m.size, -1)
WITH m LIMIT toInteger($limit)
SET m.stale = true
RETURN count(m) AS marked
