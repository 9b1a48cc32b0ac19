// Remove chunks of the namespace no document owns, with every relationship on them; returns
// how many chunks and RELATES_TO edges went.
// mode: write
// params:
//   $namespace  STRING  tenant
// returns: chunks INTEGER, edges INTEGER
// browser: :params {namespace: 'demo'}
MATCH (c:Chunk {namespace: $namespace})
WHERE NOT EXISTS { (:Document)-[:HAS_CHUNK]->(c) }
WITH collect(c) AS orphans
WITH orphans, reduce(n = 0, c IN orphans | n + COUNT { (c)-[:RELATES_TO]-() }) AS edges
CALL (orphans) {
  UNWIND orphans AS c
  DETACH DELETE c
}
RETURN size(orphans) AS chunks, edges
