// Record a vector slot's size (slot 1 on the schema record, others on their own) and a
// namespace's model and slot the first time they are seen; returns what is recorded
// afterwards, so a caller can refuse a mismatch. The namespace is recorded only when the slot
// holds vectors of its size: an embedder refused for its size must not bind the namespace to
// itself. A namespace recorded as 'unknown' (`kgrag init` without --embedder) takes the first
// real model of its size written to it. A namespace recorded before slots existed is in slot 1.
// mode: write
// params:
//   $namespace   STRING   tenant the model is recorded for
//   $model       STRING   embedder name, e.g. 'wordllama-l2_supercat-256'
//   $dimensions  INTEGER  embedding length
//   $slot        INTEGER  vector slot (1-4) kgrag chose for this size
// returns: slot_dimensions INTEGER, model STRING, namespace_dimensions INTEGER, slot INTEGER
// browser: :params {namespace: 'demo', model: 'wordllama-l2_supercat-256', dimensions: 256, slot: 1}
MERGE (s:KgragMeta {key: 'schema'})
  ON CREATE SET s.created_at = timestamp()
SET s.dimensions = CASE WHEN $slot = 1 THEN coalesce(s.dimensions, $dimensions) ELSE s.dimensions END
WITH s
CALL (s) {
  WITH s WHERE $slot > 1
  MERGE (v:KgragMeta {key: 'vectors:' + $slot})
    ON CREATE SET v.slot = $slot, v.dimensions = $dimensions, v.created_at = timestamp()
  RETURN v.dimensions AS slot_dimensions
  UNION
  WITH s WHERE $slot = 1
  RETURN s.dimensions AS slot_dimensions
}
CALL (slot_dimensions) {
  WITH slot_dimensions WHERE slot_dimensions = $dimensions
  MERGE (n:KgragMeta {key: 'embedding:' + $namespace})
    ON CREATE SET n.model = $model, n.dimensions = $dimensions, n.slot = $slot, n.namespace = $namespace,
                  n.created_at = timestamp()
    ON MATCH SET n.model = CASE WHEN n.model = 'unknown' AND n.dimensions = $dimensions THEN $model ELSE n.model END
}
OPTIONAL MATCH (n:KgragMeta {key: 'embedding:' + $namespace})
RETURN slot_dimensions, n.model AS model, n.dimensions AS namespace_dimensions, coalesce(n.slot, 1) AS slot
