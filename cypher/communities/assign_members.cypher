// (:Entity)-[:IN_COMMUNITY]->(:Community) for each (entity, community) row; rows naming an
// entity or community outside the namespace are skipped.
// mode: write
// params:
//   $namespace  STRING     tenant
//   $rows       LIST<MAP>  [{entity_id, community_id}]
// returns: written INTEGER
// browser: :params {namespace: 'demo', rows: [{entity_id: 'ent_1', community_id: 'com_1'}]}
UNWIND $rows AS row
MATCH (e:Entity {id: row.entity_id})
WHERE e.namespace = $namespace
MATCH (m:Community {id: row.community_id})
WHERE m.namespace = $namespace
MERGE (e)-[r:IN_COMMUNITY]->(m)
RETURN count(r) AS written
