// One batch of `kgrag namespace delete`: up to $batch_size each of the namespace's chunks
// (those staged for its large documents too, in namespaces '\u001f' + namespace + '\u001f' + id),
// documents, entities (with those of an unfinished entity build) and communities, every
// relationship on them included. Only nodes whose namespace is $namespace are touched, so no
// other tenant loses anything. Relationships go first, in batches of their own. The batch
// that finds nothing left also removes the embedding model (and entity graph record) kept for the namespace, which frees it for any embedder. The caller repeats it
// until a batch removes nothing (each batch is its own transaction, so memory stays bounded).
// mode: write
// params:
//   $namespace   STRING   tenant to delete
//   $batch_size  INTEGER  nodes of each kind removed per statement at most
// returns: chunks INTEGER, documents INTEGER, entities INTEGER, communities INTEGER, other INTEGER, records INTEGER, relationships INTEGER
// browser: :params {namespace: 'scratch', batch_size: 10000}
// relationships first, $batch_size at a time: a node goes only once this finds none, so no
// transaction deletes more than a bounded number of relationships with its nodes (a hub
// entity mentioned by 100k chunks once took a whole batch over the transaction memory limit)
CALL () {
  CALL () {
    MATCH (:Chunk {namespace: $namespace})-[r]->()
    RETURN r
    UNION ALL
    MATCH (e:Entity)-[r]->()
    USING INDEX e:Entity(namespace, name_key)
    WHERE e.namespace = $namespace AND e.name_key IS NOT NULL
    RETURN r
  }
  WITH r LIMIT toInteger($batch_size)
  DELETE r
  RETURN count(r) AS relationships
}
CALL (relationships) {
  WITH relationships WHERE relationships < toInteger($batch_size)
  MATCH (c:Chunk {namespace: $namespace})
  WITH c LIMIT toInteger($batch_size)
  DETACH DELETE c
  RETURN count(c) AS chunks
}
CALL (relationships) {
  WITH relationships WHERE relationships < toInteger($batch_size)
  MATCH (c:Chunk)
  WHERE c.namespace STARTS WITH '\u001f' + $namespace + '\u001f'
  WITH c LIMIT toInteger($batch_size)
  DETACH DELETE c
  RETURN count(c) AS staged_chunks
}
CALL (relationships) {
  WITH relationships WHERE relationships < toInteger($batch_size)
  MATCH (d:Document)
  USING INDEX d:Document(namespace, source)
  WHERE d.namespace = $namespace AND d.source IS NOT NULL
  WITH d LIMIT toInteger($batch_size)
  DETACH DELETE d
  RETURN count(d) AS documents
}
CALL (relationships) {
  WITH relationships WHERE relationships < toInteger($batch_size)
  MATCH (e:Entity)
  USING INDEX e:Entity(namespace, name_key)
  WHERE e.namespace = $namespace AND e.name_key IS NOT NULL
  WITH e LIMIT toInteger($batch_size)
  DETACH DELETE e
  RETURN count(e) AS named
}
CALL (relationships) {
  WITH relationships WHERE relationships < toInteger($batch_size)
  MATCH (e:Entity {staged_namespace: $namespace})
  WITH e LIMIT toInteger($batch_size)
  DETACH DELETE e
  RETURN count(e) AS staged
}
CALL (relationships) {
  WITH relationships WHERE relationships < toInteger($batch_size)
  MATCH (m:Community)
  USING INDEX m:Community(namespace, level)
  WHERE m.namespace = $namespace AND m.level IS NOT NULL
  WITH m LIMIT toInteger($batch_size)
  DETACH DELETE m
  RETURN count(m) AS communities
}
// what the indexes above cannot see (written by other tools without a source, name or level)
// is looked for by scanning, once the indexed kinds are gone
CALL (relationships, chunks, staged_chunks, documents, named, staged, communities) {
  UNWIND CASE WHEN relationships + chunks + staged_chunks + documents + named + staged + communities = 0 THEN [1] ELSE [] END AS last
  CALL () {
    MATCH (n:Document {namespace: $namespace}) RETURN n
    UNION
    MATCH (n:Entity {namespace: $namespace}) RETURN n
    UNION
    MATCH (n:Community {namespace: $namespace}) RETURN n
    UNION
    MATCH (n:EntityName {namespace: $namespace}) RETURN n
  }
  WITH n LIMIT toInteger($batch_size)
  DETACH DELETE n
  RETURN count(n) AS other
}
CALL (relationships, chunks, staged_chunks, documents, named, staged, communities, other) {
  UNWIND CASE WHEN relationships + chunks + staged_chunks + documents + named + staged + communities + other = 0 THEN [1] ELSE [] END AS done
  MATCH (k:KgragMeta)
  WHERE k.key IN ['embedding:' + $namespace, 'entity-graph:' + $namespace]
  DELETE k
  RETURN count(k) AS records
}
RETURN chunks + staged_chunks AS chunks, documents, named + staged AS entities, communities, other, records,
       relationships
