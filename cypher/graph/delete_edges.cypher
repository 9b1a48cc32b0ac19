// Delete chunk-to-chunk edges by (source, target, relation): what pruning drops of the edges
// already stored (the database adds similarity edges itself, so the per-chunk cap is applied
// again after them). Edges of other namespaces are never touched.
// mode: write
// params:
//   $namespace  STRING     tenant
//   $rows       LIST<MAP>  [{source_id, target_id, relation}]
// returns: deleted INTEGER
// browser: :params {namespace: 'demo', rows: [{source_id: 'c1', target_id: 'c2', relation: 'similar_to'}]}
UNWIND $rows AS row
MATCH (s:Chunk {id: row.source_id})-[r:RELATES_TO]->(t:Chunk {id: row.target_id})
WHERE s.namespace = $namespace AND t.namespace = $namespace AND r.relation = row.relation
DELETE r
RETURN count(*) AS deleted
