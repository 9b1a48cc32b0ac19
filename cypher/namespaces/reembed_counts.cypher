// How far a namespace's re-embed is: its chunks and entities with a vector of the old model,
// and how many of them have one of the new model already.
// mode: read
// params:
//   $namespace     STRING  tenant being re-embedded
//   $old_property  STRING  the property searches read now, e.g. 'embedding'
//   $new_property  STRING  the property the new model's vectors go to, e.g. 'embedding_2'
// returns: chunk_total INTEGER, chunk_done INTEGER, entity_total INTEGER, entity_done INTEGER
// browser: :params {namespace: 'demo', old_property: 'embedding', new_property: 'embedding_2'}
CALL () {
  MATCH (c:Chunk {namespace: $namespace}) WHERE c[$old_property] IS NOT NULL
  RETURN count(c) AS chunk_total, count(c[$new_property]) AS chunk_done
}
CALL () {
  MATCH (e:Entity) USING INDEX e:Entity(namespace, name_key)
  WHERE e.namespace = $namespace AND e.name_key IS NOT NULL AND e[$old_property] IS NOT NULL
  RETURN count(e) AS entity_total, count(e[$new_property]) AS entity_done
}
RETURN chunk_total, chunk_done, entity_total, entity_done
