// What prune_orphans would remove: chunks of the namespace no document owns, and the
// RELATES_TO edges touching them. (Neo4j cannot hold a dangling relationship, so an orphan
// edge is an edge on an orphan chunk.)
// mode: read
// params:
//   $namespace  STRING  tenant
// returns: chunks INTEGER, edges INTEGER
// browser: :params {namespace: 'demo'}
MATCH (c:Chunk {namespace: $namespace})
WHERE NOT EXISTS { (:Document)-[:HAS_CHUNK]->(c) }
RETURN count(c) AS chunks, sum(COUNT { (c)-[:RELATES_TO]-() }) AS edges
