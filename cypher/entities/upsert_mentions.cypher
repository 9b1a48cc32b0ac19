// Link chunks to the entities they mention: (c)-[:MENTIONS {count}]->(e). The count is set,
// not added: the same chunk is the same text, so a re-run writes the same number. Rows whose
// chunk or entity is not in the namespace are skipped.
// mode: write
// params:
//   $namespace  STRING     tenant
//   $rows       LIST<MAP>  [{chunk_id, entity_id, count}]
// returns: written INTEGER
// browser: :params {namespace: 'demo', rows: [{chunk_id: 'chk_1', entity_id: 'ent_1', count: 2}]}
UNWIND $rows AS row
MATCH (c:Chunk {id: row.chunk_id})
WHERE c.namespace = $namespace
MATCH (e:Entity {id: row.entity_id})
WHERE e.namespace = $namespace
MERGE (c)-[m:MENTIONS]->(e)
SET m.count = row.count
RETURN count(m) AS written
