// One batch of `kgrag graph clear`: remove up to $batch_size triple edges (RELATED_TO with
// origin 'triple') and up to $batch_size triple mentions (MENTIONS with origin 'triple') of
// the namespace, then the entities they touched that are left with no RELATED_TO and no
// MENTIONS at all. Documents, chunks, chunk edges, and entities still linked by the entity
// extractor are never touched. The caller repeats it until a batch removes no edge.
// mode: write
// params:
//   $namespace   STRING   tenant
//   $batch_size  INTEGER  edges (and mentions) removed per statement at most
// returns: edges INTEGER, mentions INTEGER, entities INTEGER
// browser: :params {namespace: 'demo', batch_size: 10000}
CALL () {
  MATCH (s:Entity)-[r:RELATED_TO {origin: 'triple'}]->(o:Entity)
  USING INDEX s:Entity(namespace, name_key)
  WHERE s.namespace = $namespace AND s.name_key IS NOT NULL
  WITH r, s, o LIMIT toInteger($batch_size)
  WITH collect(r) AS gone, collect(s) + collect(o) AS touched
  FOREACH (x IN gone | DELETE x)
  RETURN size(gone) AS edges, touched
}
CALL () {
  MATCH (:Chunk)-[m:MENTIONS {origin: 'triple'}]->(e:Entity)
  USING INDEX e:Entity(namespace, name_key)
  WHERE e.namespace = $namespace AND e.name_key IS NOT NULL
  WITH m, e LIMIT toInteger($batch_size)
  WITH collect(m) AS gone, collect(e) AS touched
  FOREACH (x IN gone | DELETE x)
  RETURN size(gone) AS mentions, touched AS mentioned
}
CALL (touched, mentioned) {
  UNWIND touched + mentioned AS e
  WITH DISTINCT e
  WHERE NOT EXISTS { (e)-[:RELATED_TO]-() } AND NOT EXISTS { (e)<-[:MENTIONS]-() }
  WITH collect(e) AS orphans
  FOREACH (x IN orphans | DETACH DELETE x)
  RETURN size(orphans) AS entities
}
RETURN edges, mentions, entities
