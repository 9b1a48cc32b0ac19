// Bring dirty entities up to date (entity_graph/dirty_entities tells what they are), and
// publish the staged ones with everything a reader needs at once: name,
// type, description with its embedding (null: keep the embedding), source chunk and mention
// count; the communities of an entity that changed are marked stale (their report no longer
// says what the members are). An entity no chunk mentions and no triple uses goes, with its
// relationships (its communities marked stale first); its CO_OCCURS relationships are
// described again when its name changed. An entity marked again since it was read
// (`touches` moved: another ingest linked or unlinked it) is left dirty, to be read again;
// one another ingest updated since (no longer dirty, `touches` the same) is left as that
// update wrote it: both were read at the same marks, and a read that overlapped that update
// may have seen its source chunk half moved.
// With `references`, the chunks mentioning it are marked to have their `references` edges
// decided again (its chunks changed in a way that moves them), in the same transaction.
// mode: write
// params:
//   $namespace  STRING     tenant
//   $rows       LIST<MAP>  [{id, touches, name, type, description, source_chunk_id, embedding: LIST<FLOAT>|null, df, changed, renamed, references}]
//   $vector_property  STRING  property holding the namespace's vectors (its embedding model's; `kgrag cypher params` fills it)
// returns: updated INTEGER, deleted INTEGER, moved INTEGER
// browser: :params {namespace: 'demo', rows: [], vector_property: 'embedding'}
UNWIND $rows AS row
MATCH (e:Entity {id: row.id})
WHERE coalesce(e.namespace, e.staged_namespace) = $namespace
  AND e.dirty
WITH e, row, coalesce(e.touches, 0) <> row.touches AS moved
OPTIONAL CALL (e, row, moved) {
  WITH e, row WHERE NOT moved
  CALL (e, row) {
    WITH e, row WHERE row.changed
    MATCH (e)-[:IN_COMMUNITY]->(m:Community)
    SET m.stale = true
  }
  // the triple test reads the entity's relationships: only for one no chunk mentions
  WITH e, row, CASE WHEN COUNT { (e)<-[:MENTIONS]-() } = 0
                    THEN NOT EXISTS { (e)-[:RELATED_TO {origin: 'triple'}]-(:Entity) } ELSE false END AS orphan
  CALL (e, row, orphan) {
    WITH e, row WHERE NOT orphan
    SET e.namespace = $namespace, e.staged_namespace = null, e.staged_build = null,
        e.name = row.name, e.type = row.type, e.description = row.description,
        e.source_chunk_id = row.source_chunk_id, e.df = row.df, e.dirty = null, e.lost = null,
        e.settled = row.touches, e.new_source = null, e.new_place = null, e.rechunked = null
    WITH e, row
    CALL (e, row) {
      WITH e WHERE row.references
      MATCH (e)<-[:MENTIONS]-(c:Chunk)
      WHERE c.namespace = $namespace AND c.links_dirty IS NULL
      SET c.links_dirty = true
    }
    CALL (e, row) {
      WITH e, row WHERE row.renamed
      MATCH (e)-[r:RELATED_TO {relation_key: 'CO_OCCURS'}]-(:Entity)
      WHERE r.strength IS NOT NULL
      WITH r, startNode(r) AS a, endNode(r) AS b
      // as entity_graph/settle_relations words it, with the new name
      SET r.description = a.name + ' and ' + b.name + ' appear together in ' + toString(r.windows) + ' sentence'
                          + CASE WHEN r.windows = 1 THEN '' ELSE 's' END
    }
    WITH e, row WHERE row.embedding IS NOT NULL
    CALL db.create.setNodeVectorProperty(e, $vector_property, row.embedding)
  }
  CALL (e, orphan) {
    WITH e WHERE orphan
    DETACH DELETE e
  }
  RETURN orphan
}
RETURN count(CASE WHEN NOT moved AND NOT orphan THEN 1 END) AS updated, count(CASE WHEN orphan THEN 1 END) AS deleted,
       count(CASE WHEN moved THEN 1 END) AS moved
