// One batch of clearing a namespace's entity graph before it is built anew: its `references`
// edges of entity origin, the mentions extraction wrote, its co-occurrence relationships,
// the entities nothing else uses (no triple), its name statistics and the chunks' and
// documents' records of them (and the chunks' NameScanned label: out of the chunk_names index). At most $batch_size of each per transaction; the caller
// repeats it until a batch finds nothing.
// mode: write
// params:
//   $namespace   STRING   tenant
//   $batch_size  INTEGER  items of each kind per transaction
// returns: removed INTEGER
// browser: :params {namespace: 'scratch', batch_size: 10000}
CALL () {
  MATCH (:Chunk {namespace: $namespace})-[r:RELATES_TO {relation: 'references'}]->(:Chunk)
  WHERE r.origin = 'entities'
  WITH r LIMIT toInteger($batch_size)
  DELETE r
  RETURN count(r) AS edges
}
CALL () {
  MATCH (c:Chunk {namespace: $namespace})-[m:MENTIONS]->(:Entity)
  WHERE m.extracted
  WITH m LIMIT toInteger($batch_size)
  DELETE m
  RETURN count(m) AS mentions
}
CALL () {
  MATCH (e:Entity)
  USING INDEX e:Entity(namespace, name_key)
  WHERE e.namespace = $namespace AND e.name_key IS NOT NULL
    AND NOT EXISTS { (e)<-[:MENTIONS]-() } AND NOT EXISTS { (e)-[:RELATED_TO {origin: 'triple'}]-() }
  WITH e LIMIT toInteger($batch_size)
  CALL (e) {
    MATCH (e)-[r]-()
    WITH r LIMIT 100000
    DELETE r
  }
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
  MATCH (c:Chunk {namespace: $namespace})
  WHERE c.name_keys IS NOT NULL OR c.pair_a IS NOT NULL OR c.links_dirty IS NOT NULL OR c.relink IS NOT NULL
    OR c.link_forms IS NOT NULL OR c:NameScanned
  WITH c LIMIT toInteger($batch_size)
  SET c.name_keys = null, c.name_forms = null, c.name_stats = null, c.pair_a = null, c.pair_b = null,
      c.pair_strength = null, c.pair_windows = null, c.links_dirty = null, c.relink = null,
      c.link_forms = null, c.link_counts = null
  REMOVE c:NameScanned
  RETURN count(c) AS chunks
}
CALL () {
  MATCH (d:Document)
  USING INDEX d:Document(namespace, source)
  WHERE d.namespace = $namespace AND d.source IS NOT NULL AND (d.entities_hash IS NOT NULL OR d.link_forms IS NOT NULL)
  WITH d LIMIT toInteger($batch_size)
  SET d.entities_hash = null, d.link_forms = null, d.link_counts = null
  RETURN count(d) AS documents
}
RETURN edges + mentions + entities + staged + names + chunks + documents AS removed
