// Remove communities of the namespace that no entity belongs to any more (their members were
// deleted with the documents that mentioned them).
// mode: write
// params:
//   $namespace  STRING  tenant
// returns: pruned INTEGER
// browser: :params {namespace: 'demo'}
MATCH (m:Community {namespace: $namespace})
WHERE NOT EXISTS { (:Entity)-[:IN_COMMUNITY]->(m) }
WITH collect(m) AS empty
CALL (empty) {
  UNWIND empty AS m
  DETACH DELETE m
}
RETURN size(empty) AS pruned
