// After a re-embed's switch, remove up to $batch_size old vectors of the namespace's chunks and
// as many of its entities (bounded transactions); the batch that finds none left forgets the
// old slot on the namespace's record. Only runs while the record names $slot (the new one) and
// keeps an old slot, so the vectors searches read are never touched.
// mode: write
// params:
//   $namespace     STRING   tenant re-embedded
//   $old_property  STRING   the old slot's property, e.g. 'embedding'
//   $slot          INTEGER  the slot the namespace reads now
//   $batch_size    INTEGER  vectors of each kind removed at most
// returns: removed INTEGER
// browser: :params {namespace: 'demo', old_property: 'embedding', slot: 2, batch_size: 5000}
MATCH (n:KgragMeta {key: 'embedding:' + $namespace})
WHERE coalesce(n.slot, 1) = $slot AND n.previous_slot IS NOT NULL AND n.previous_slot <> $slot
CALL () {
  MATCH (c:Chunk {namespace: $namespace}) WHERE c[$old_property] IS NOT NULL
  WITH c LIMIT toInteger($batch_size)
  SET c[$old_property] = null
  RETURN count(c) AS chunks
}
CALL () {
  MATCH (e:Entity) USING INDEX e:Entity(namespace, name_key)
  WHERE e.namespace = $namespace AND e.name_key IS NOT NULL AND e[$old_property] IS NOT NULL
  WITH e LIMIT toInteger($batch_size)
  SET e[$old_property] = null
  RETURN count(e) AS entities
}
CALL (n, chunks, entities) {
  WITH n WHERE chunks + entities = 0
  REMOVE n.previous_slot
}
RETURN chunks + entities AS removed
