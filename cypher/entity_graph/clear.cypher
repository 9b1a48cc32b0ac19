// One batch of clearing a namespace's entity graph before it is built anew, once its chunks
// are cleared (entity_graph/clear_chunks): the entities nothing else uses (no mention left,
// no triple) and their co-occurrence relationships, the staged entities, the name
// statistics and the documents' records of the graph. At most $batch_size of each per
// transaction; the caller repeats it until a batch finds nothing.
// mode: write
// params:
//   $namespace   STRING   tenant
//   $batch_size  INTEGER  items of each kind per transaction
// returns: removed INTEGER
// browser: :params {namespace: 'scratch', batch_size: 10000}
// their relationships first, $batch_size at a time, and the entities once none is left: at a
// million chunks a batch of entities held over a million co-occurrences, more than the
// server's transaction memory
CALL () {
  MATCH (e:Entity)
  USING INDEX e:Entity(namespace, name_key)
  WHERE e.namespace = $namespace AND e.name_key IS NOT NULL
    AND NOT EXISTS { (e)<-[:MENTIONS]-() } AND NOT EXISTS { (e)-[:RELATED_TO {origin: 'triple'}]-() }
  WITH e LIMIT toInteger($batch_size)
  MATCH (e)-[r]-()
  WITH DISTINCT r LIMIT toInteger($batch_size)
  DELETE r
  RETURN count(r) AS relationships
}
CALL (relationships) {
  WITH relationships WHERE relationships < toInteger($batch_size)
  MATCH (e:Entity)
  USING INDEX e:Entity(namespace, name_key)
  WHERE e.namespace = $namespace AND e.name_key IS NOT NULL
    AND NOT EXISTS { (e)<-[:MENTIONS]-() } AND NOT EXISTS { (e)-[:RELATED_TO {origin: 'triple'}]-() }
  WITH e LIMIT toInteger($batch_size)
  DETACH DELETE e
  RETURN count(e) AS entities
}
CALL () {
  MATCH (e:Entity {staged_namespace: $namespace})
  WHERE e.maintained
  WITH e LIMIT toInteger($batch_size)
  DETACH DELETE e
  RETURN count(e) AS staged
}
CALL () {
  MATCH (n:EntityName {namespace: $namespace})
  WITH n LIMIT toInteger($batch_size)
  DELETE n
  RETURN count(n) AS names
}
CALL () {
  MATCH (d:Document)
  USING INDEX d:Document(namespace, source)
  WHERE d.namespace = $namespace AND d.source IS NOT NULL AND (d.entities_hash IS NOT NULL OR d.link_forms IS NOT NULL)
  WITH d LIMIT toInteger($batch_size)
  SET d.entities_hash = null, d.link_forms = null, d.link_counts = null
  RETURN count(d) AS documents
}
RETURN relationships + entities + staged + names + documents AS removed
