// Write `references` edges of entity origin (chunks sharing rare entities) as the maintainer
// decided them: each row one direction, with its weight and whether its source picked it;
// pairs in $drop lose both directions. The chunks' marks are cleared.
// mode: write
// params:
//   $namespace  STRING        tenant
//   $rows       LIST<MAP>     [{id, source_id, target_id, weight, picked}]
//   $drop       LIST<MAP>     [{a, b}]
//   $chunk_ids  LIST<STRING>  chunks whose marks to clear
// returns: written INTEGER
// browser: :params {namespace: 'demo', rows: [], drop: [], chunk_ids: []}
CALL () {
  UNWIND $drop AS pair
  MATCH (a:Chunk {id: pair.a})-[r:RELATES_TO {relation: 'references'}]-(b:Chunk {id: pair.b})
  WHERE r.origin = 'entities' AND r.namespace = $namespace
  DELETE r
}
CALL () {
  UNWIND $chunk_ids AS id
  MATCH (c:Chunk {id: id})
  WHERE c.namespace = $namespace
  SET c.links_dirty = null
}
UNWIND $rows AS row
MATCH (s:Chunk {id: row.source_id})
WHERE s.namespace = $namespace
MATCH (t:Chunk {id: row.target_id})
WHERE t.namespace = $namespace
MERGE (s)-[r:RELATES_TO {relation: 'references'}]->(t)
  ON CREATE SET r.id = row.id, r.namespace = $namespace, r.origin = 'entities', r.description = 'shared entities'
SET r.weight = row.weight, r.picked = row.picked
RETURN count(r) AS written
