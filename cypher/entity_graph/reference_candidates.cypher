// For each chunk: every chunk it shares a rare entity with (one mentioned by 2 to
// $max_chunks chunks), with the pair's weight in units of 1 / $unit (each shared entity
// mentioned by df chunks adds $unit / (df - 1): integers, so the order of the sum does not
// matter), and its `references` edges of entity origin now, with whether each end picked the
// pair (an edge exists while either end has it among its heaviest).
// mode: read
// params:
//   $namespace   STRING        tenant
//   $chunk_ids   LIST<STRING>  chunks
//   $max_chunks  INTEGER       an entity in more chunks links none of them
//   $unit        INTEGER       a multiple of every 1 .. max_chunks - 1
// returns: id STRING, candidates LIST<LIST<ANY>>, edges LIST<LIST<ANY>>
// browser: :params {namespace: 'demo', chunk_ids: [], max_chunks: 10, unit: 2520}
UNWIND $chunk_ids AS cid
MATCH (a:Chunk {id: cid})
WHERE a.namespace = $namespace
CALL (a) {
  MATCH (a)-[:MENTIONS]->(e:Entity)
  WHERE e.namespace = $namespace
  WITH e, COUNT { (e)<-[:MENTIONS]-() } AS df
  WHERE df >= 2 AND df <= $max_chunks
  // no label on b: only chunks mention, and a label invites a seek over every chunk of
  // the namespace in place of following the entity's few mentions
  MATCH (e)<-[:MENTIONS]-(b)
  WHERE b <> a AND b.namespace = $namespace
  WITH b, sum($unit / (df - 1)) AS w
  RETURN collect([b.id, w]) AS candidates
}
CALL (a) {
  MATCH (a)-[r:RELATES_TO {relation: 'references'}]->(x:Chunk)
  WHERE r.origin = 'entities' AND r.namespace = $namespace
  OPTIONAL MATCH (x)-[back:RELATES_TO {relation: 'references'}]->(a)
  WHERE back.origin = 'entities'
  RETURN collect([x.id, coalesce(r.picked, false), coalesce(back.picked, false)]) AS edges
}
RETURN a.id AS id, candidates, edges
