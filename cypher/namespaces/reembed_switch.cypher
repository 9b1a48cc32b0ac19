// The switch of a re-embed, in one transaction: when every chunk and entity of the namespace
// with an old vector has a new one, the namespace's record names the new model, size and slot
// (so every search from then on reads the new vectors, none a mix) and keeps the old slot as
// previous_slot until its vectors are removed. Otherwise nothing changes and the counts of
// what is still missing come back.
// mode: write
// params:
//   $namespace     STRING  tenant being re-embedded
//   $model         STRING  the new embedder's name (must be the one the re-embed recorded)
//   $old_property  STRING  the property searches read until now
//   $new_property  STRING  the property of the new model's slot
// returns: missing_chunks INTEGER, missing_entities INTEGER, switched BOOLEAN
// browser: :params {namespace: 'demo', model: 'sentence-transformers-all-MiniLM-L6-v2-384', old_property: 'embedding', new_property: 'embedding_2'}
MATCH (n:KgragMeta {key: 'embedding:' + $namespace})
WHERE n.next_model = $model
// the lock first: a concurrent writer of the record waits, the counts below are final
SET n.reembed_switching = true
WITH n
CALL () {
  MATCH (c:Chunk {namespace: $namespace}) WHERE c[$old_property] IS NOT NULL AND c[$new_property] IS NULL
  RETURN count(c) AS missing_chunks
}
CALL () {
  MATCH (e:Entity) USING INDEX e:Entity(namespace, name_key)
  WHERE e.namespace = $namespace AND e.name_key IS NOT NULL AND e[$old_property] IS NOT NULL AND e[$new_property] IS NULL
  RETURN count(e) AS missing_entities
}
CALL (n, missing_chunks, missing_entities) {
  WITH n WHERE missing_chunks = 0 AND missing_entities = 0
  SET n.previous_slot = coalesce(n.slot, 1), n.slot = n.next_slot, n.model = n.next_model,
      n.dimensions = n.next_dimensions, n.switched_at = timestamp()
  REMOVE n.next_model, n.next_dimensions, n.next_slot
}
REMOVE n.reembed_switching
RETURN missing_chunks, missing_entities, n.next_model IS NULL AS switched
