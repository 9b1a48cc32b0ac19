// Create or update typed, weighted entity relationships: one (a)-[:RELATED_TO {type}]->(b)
// per (source, target, type). A repeated relationship keeps the highest weight (and the
// metadata that came with it), the longest description and the earliest sequence. Rows whose
// ends are not entities of the namespace are skipped.
// mode: write
// params:
//   $namespace  STRING     tenant
//   $rows       LIST<MAP>  [{source_id, target_id, type, weight, description, sequence: INTEGER|null, metadata: STRING (JSON)}]
// returns: written INTEGER
// browser: :params {namespace: 'demo', rows: [{source_id: 'ent_1', target_id: 'ent_2', type: 'ALLY', weight: 0.9, description: '', sequence: null, metadata: '{}'}]}
UNWIND $rows AS row
MATCH (a:Entity {id: row.source_id})
WHERE a.namespace = $namespace
MATCH (b:Entity {id: row.target_id})
WHERE b.namespace = $namespace
// merged on an unindexed key: with {type: ...} the planner may pick the related_to_type
// index and read every edge of that type, in every namespace, for each row
MERGE (a)-[r:RELATED_TO {relation_key: row.type}]->(b)
  ON CREATE SET r.type = row.type, r.namespace = $namespace, r.origin = 'extraction'
WITH r, row, r.weight IS NULL OR row.weight > r.weight AS heavier
SET r.weight = CASE WHEN heavier THEN row.weight ELSE r.weight END,
    r.metadata = CASE WHEN heavier OR r.metadata IS NULL THEN row.metadata ELSE r.metadata END,
    r.description = CASE WHEN r.description IS NULL OR size(row.description) > size(r.description)
                         THEN row.description ELSE r.description END,
    r.sequence = CASE WHEN r.sequence IS NULL OR (row.sequence IS NOT NULL AND row.sequence < r.sequence)
                      THEN row.sequence ELSE r.sequence END
RETURN count(r) AS written
