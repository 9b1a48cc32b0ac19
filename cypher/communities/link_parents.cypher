// (:Community)-[:PARENT]->(:Community), child to parent (the next coarser level).
// mode: write
// params:
//   $namespace  STRING     tenant
//   $rows       LIST<MAP>  [{child_id, parent_id}]
// returns: written INTEGER
// browser: :params {namespace: 'demo', rows: [{child_id: 'com_1', parent_id: 'com_2'}]}
UNWIND $rows AS row
MATCH (c:Community {id: row.child_id})
WHERE c.namespace = $namespace
MATCH (p:Community {id: row.parent_id})
WHERE p.namespace = $namespace
MERGE (c)-[r:PARENT]->(p)
RETURN count(r) AS written
