// Upsert subject-predicate-object triples into the entity graph: both
// ends are MERGEd as (:Entity) by their stable id, the triple is one
// (s)-[:RELATED_TO {type: predicate, origin: 'triple'}]->(o) per (subject, predicate, object).
// Re-adding a triple keeps one edge: the highest weight wins, non-empty metadata replaces the
// stored one, created_at stays the first. A row with a chunk_id also links that chunk of the
// namespace to both ends with MENTIONS (how graph RAG reaches the triples from vector hits),
// marked `triple: true` whoever created it: the entity extractor marks the same relationship
// `extracted: true`, and `kgrag triples clear` removes a mention only when no other source keeps
// it. An unknown chunk id links nothing. The predicate is a property value
// checked against the allow-list in Python, never Cypher text. An entity id of another
// namespace is left alone (the row is skipped); an entity an unfinished entity build staged
// becomes visible, since the triple needs it now.
// Why MERGE on triple_key (= the predicate) and not on type: MERGE cannot take a hint, and
// on a small or fresh graph the planner answers `{type: ...}` with the related_to_type index,
// which reads every edge of that predicate (transaction state included) for each row:
// quadratic in the batch. triple_key has no index, so MERGE always expands the two entities'
// own relationships. The chunk hint is there for the same reason (the namespace index would
// read every chunk of the namespace per row).
// mode: write
// params:
//   $namespace  STRING     tenant
//   $rows       LIST<MAP>  [{subject_id, subject, subject_key, subject_type, predicate, object_id, object, object_key, object_type, weight, metadata, chunk_id}]
//   $now        INTEGER    epoch seconds stamped on new entities and edges
// returns: stored INTEGER
// browser: :params {namespace: 'demo', now: 1700000000, rows: [{subject_id: 'ent_a', subject: 'error:timeout', subject_key: 'error:timeout', subject_type: 'CONCEPT', predicate: 'caused_by', object_id: 'ent_b', object: 'tool:http_client', object_key: 'tool:http_client', object_type: 'CONCEPT', weight: 1.0, metadata: '{}', chunk_id: null}]}
UNWIND $rows AS row
MERGE (s:Entity {id: row.subject_id})
  ON CREATE SET s.namespace = $namespace, s.name = row.subject, s.name_key = row.subject_key,
                s.type = row.subject_type, s.created_at = $now
WITH s, row WHERE s.namespace = $namespace OR s.staged_namespace = $namespace
SET s.name_key = coalesce(s.name_key, row.subject_key), s.namespace = $namespace,
    s.staged_namespace = null, s.staged_build = null
MERGE (o:Entity {id: row.object_id})
  ON CREATE SET o.namespace = $namespace, o.name = row.object, o.name_key = row.object_key,
                o.type = row.object_type, o.created_at = $now
WITH s, o, row WHERE o.namespace = $namespace OR o.staged_namespace = $namespace
SET o.name_key = coalesce(o.name_key, row.object_key), o.namespace = $namespace,
    o.staged_namespace = null, o.staged_build = null
MERGE (s)-[r:RELATED_TO {triple_key: row.predicate}]->(o)
  ON CREATE SET r.type = row.predicate, r.origin = 'triple', r.namespace = $namespace,
                r.weight = row.weight, r.metadata = row.metadata, r.created_at = $now
  ON MATCH SET r.weight = CASE WHEN row.weight > r.weight THEN row.weight ELSE r.weight END,
               r.metadata = CASE WHEN row.metadata = '{}' THEN r.metadata ELSE row.metadata END
WITH s, o, r, row
CALL (s, o, row) {
  WITH s, o, row WHERE row.chunk_id IS NOT NULL
  MATCH (c:Chunk {id: row.chunk_id})
  USING INDEX c:Chunk(id)
  WHERE c.namespace = $namespace
  MERGE (c)-[ms:MENTIONS]->(s) ON CREATE SET ms.count = 1, ms.origin = 'triple'
  SET ms.triple = true
  MERGE (c)-[mo:MENTIONS]->(o) ON CREATE SET mo.count = 1, mo.origin = 'triple'
  SET mo.triple = true
}
RETURN count(r) AS stored
