// The vector slots of the database (slot 1's size is the schema record's, the others' their
// own records), the embedding model, size and slot recorded for a namespace with a re-embed in
// progress if any, and whether the chunk full-text index holds the namespace field.
// mode: read
// params:
//   $namespace  STRING  tenant whose embedding model to read
// returns: slots LIST<MAP>, model STRING, namespace_dimensions INTEGER, slot INTEGER, next_model STRING, next_dimensions INTEGER, next_slot INTEGER, previous_slot INTEGER, chunk_text_namespaced BOOLEAN
// browser: :params {namespace: 'demo'}
OPTIONAL MATCH (s:KgragMeta {key: 'schema'})
OPTIONAL MATCH (n:KgragMeta {key: 'embedding:' + $namespace})
CALL () {
  OPTIONAL MATCH (v:KgragMeta) WHERE v.key STARTS WITH 'vectors:'
  WITH v ORDER BY v.slot
  RETURN [x IN collect(v) | {slot: x.slot, dimensions: x.dimensions}] AS others
}
RETURN CASE WHEN s.dimensions IS NULL THEN [] ELSE [{slot: 1, dimensions: s.dimensions}] END + others AS slots,
       n.model AS model, n.dimensions AS namespace_dimensions, n.slot AS slot,
       n.next_model AS next_model, n.next_dimensions AS next_dimensions, n.next_slot AS next_slot,
       n.previous_slot AS previous_slot,
       coalesce(s.chunk_text_namespaced, false) AS chunk_text_namespaced
