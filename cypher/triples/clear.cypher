// One batch of `kgrag triples clear`: remove up to $batch_size triple edges (RELATED_TO with
// origin 'triple') and release up to $batch_size triple mentions (MENTIONS marked `triple`, or
// of origin 'triple' when written before the marks) of the namespace: a mention the entity
// extractor also wrote (`extracted`) loses only its triple mark and stays, the others are
// deleted. Then the entities they touched that are left with no RELATED_TO and no MENTIONS at
// all go. Documents, chunks, chunk edges, and what the entity extractor wrote are never
// touched. The caller repeats it until a batch changes nothing.
// mode: write
// params:
//   $namespace   STRING   tenant
//   $batch_size  INTEGER  edges (and mentions) removed per statement at most
// returns: edges INTEGER, mentions INTEGER, kept_mentions INTEGER, entities INTEGER
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
  MATCH (:Chunk)-[m:MENTIONS]->(e:Entity)
  USING INDEX e:Entity(namespace, name_key)
  WHERE e.namespace = $namespace AND e.name_key IS NOT NULL
    AND (m.triple = true OR (m.triple IS NULL AND m.origin = 'triple'))
  WITH m, e LIMIT toInteger($batch_size)
  WITH collect(CASE WHEN m.extracted = true THEN null ELSE m END) AS gone,
       collect(CASE WHEN m.extracted = true THEN m END) AS shared, collect(e) AS mentioned
  FOREACH (x IN gone | DELETE x)
  FOREACH (x IN shared | SET x.triple = false, x.origin = 'extraction')
  RETURN size(gone) AS mentions, size(shared) AS kept_mentions, mentioned
}
CALL (touched, mentioned) {
  UNWIND touched + mentioned AS e
  WITH DISTINCT e
  WHERE NOT EXISTS { (e)-[:RELATED_TO]-() } AND NOT EXISTS { (e)<-[:MENTIONS]-() }
  WITH collect(e) AS orphans
  FOREACH (x IN orphans | DETACH DELETE x)
  RETURN size(orphans) AS entities
}
RETURN edges, mentions, kept_mentions, entities
