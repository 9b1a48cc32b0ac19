// Start re-embedding a namespace with another model: record the target slot's size (slot 1's
// on the schema record, the others' own record) and, when the slot holds that size, the model
// and slot the namespace is being re-embedded into. A re-embed already recorded is kept as is
// (the caller compares next_model with its own). Searches keep reading the namespace's slot.
// mode: write
// params:
//   $namespace   STRING   tenant to re-embed
//   $model       STRING   the new embedder's name
//   $dimensions  INTEGER  its vector length
//   $slot        INTEGER  the slot its vectors go to (not the namespace's own)
// returns: slot_dimensions INTEGER, next_model STRING, next_slot INTEGER
// browser: :params {namespace: 'demo', model: 'sentence-transformers-all-MiniLM-L6-v2-384', dimensions: 384, slot: 2}
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
MATCH (n:KgragMeta {key: 'embedding:' + $namespace})
CALL (n, slot_dimensions) {
  WITH n WHERE slot_dimensions = $dimensions AND n.next_model IS NULL AND coalesce(n.slot, 1) <> $slot
  SET n.next_model = $model, n.next_dimensions = $dimensions, n.next_slot = $slot, n.reembed_started_at = timestamp()
}
RETURN slot_dimensions, n.next_model AS next_model, n.next_slot AS next_slot
