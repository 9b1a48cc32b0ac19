// How current a namespace's entity graph is: documents and leaf chunks, and how many of them
// the graph has linked since their last change (and the chunks marked to be linked again
// because a name they may write entered or left the vocabulary); entities, communities (stale ones: a member
// changed since their report), mentions and relationships, when it was last brought up to date, and what the
// maintainer still has to do (entities and names marked as changed).
// mode: read
// params:
//   $namespace  STRING  tenant
// returns: has_graph BOOLEAN, documents INTEGER, documents_linked INTEGER, chunks INTEGER, chunks_linked INTEGER, chunks_to_relink INTEGER, entities INTEGER, mentions INTEGER, relations INTEGER, communities INTEGER, stale_communities INTEGER, last_build STRING, generation INTEGER, dirty INTEGER
// browser: :params {namespace: 'demo'}
OPTIONAL MATCH (k:KgragMeta {key: 'entity-graph:' + $namespace})
CALL () {
  MATCH (d:Document {namespace: $namespace})
  RETURN count(d) AS documents,
         count(CASE WHEN d.entities_hash IS NOT NULL AND d.entities_hash = d.content_hash THEN 1 END) AS documents_linked
}
CALL () {
  MATCH (c:Chunk {namespace: $namespace})
  WHERE NOT EXISTS { (:Chunk)-[:CHILD_OF]->(c) }
  RETURN count(c) AS chunks, count(c.pair_a) AS chunks_linked
}
CALL () {
  MATCH (c:Chunk {relink: true})
  USING INDEX c:Chunk(relink)
  WHERE c.namespace = $namespace
  RETURN count(c) AS chunks_to_relink
}
CALL () {
  MATCH (e:Entity)
  USING INDEX e:Entity(namespace, name_key)
  WHERE e.namespace = $namespace AND e.name_key IS NOT NULL
  RETURN count(e) AS entities, count(e.dirty) AS dirty
}
CALL () {
  MATCH (:Chunk {namespace: $namespace})-[r:MENTIONS]->()
  RETURN count(r) AS mentions
}
CALL () {
  MATCH (e:Entity)-[r:RELATED_TO]->()
  USING INDEX e:Entity(namespace, name_key)
  WHERE e.namespace = $namespace AND e.name_key IS NOT NULL
  RETURN count(r) AS relations
}
CALL () {
  MATCH (m:Community)
  USING INDEX m:Community(namespace, level)
  WHERE m.namespace = $namespace AND m.level IS NOT NULL
  RETURN count(m) AS communities, count(CASE WHEN m.stale THEN 1 END) AS stale_communities
}
RETURN k IS NOT NULL OR entities > 0 AS has_graph, documents, documents_linked, chunks, chunks_linked, chunks_to_relink,
       entities, mentions, relations, communities, stale_communities, k.last_build AS last_build, coalesce(k.generation, 0) AS generation,
       dirty
