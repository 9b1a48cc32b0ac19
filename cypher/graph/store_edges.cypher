// Upsert chunk-to-chunk edges. One RELATES_TO per (source, target, relation): a duplicate keeps
// the highest weight (and that edge's description and origin). Edges whose endpoints are not
// chunks of the namespace are skipped, and so are weights outside (0, 1], which the graph reads
// rely on (graph/retrieve_vector_seeded bounds what a hop can add by them).
// mode: write
// params:
//   $namespace  STRING     tenant
//   $rows       LIST<MAP>  [{id, source_id, target_id, relation, weight, description, origin}]
// returns: stored INTEGER
// browser: :params {namespace: 'demo', rows: [{id: 'e1', source_id: 'c1', target_id: 'c2', relation: 'elaborates', weight: 0.8, description: 'more detail', origin: 'llm'}]}
UNWIND $rows AS row
WITH row WHERE row.weight > 0 AND row.weight <= 1
MATCH (s:Chunk {id: row.source_id})
WHERE s.namespace = $namespace
MATCH (t:Chunk {id: row.target_id})
WHERE t.namespace = $namespace
MERGE (s)-[r:RELATES_TO {relation: row.relation}]->(t)
ON CREATE SET r.id = row.id, r.weight = row.weight, r.description = row.description,
              r.origin = row.origin, r.namespace = $namespace
ON MATCH SET r.description = CASE WHEN row.weight > r.weight THEN row.description ELSE r.description END,
             r.origin = CASE WHEN row.weight > r.weight THEN row.origin ELSE r.origin END,
             r.weight = CASE WHEN row.weight > r.weight THEN row.weight ELSE r.weight END
RETURN count(r) AS stored
