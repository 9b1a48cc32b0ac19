// Write what documents' chunks contribute to the entity graph (their old links were taken
// back first, entity_graph/unlink_chunks): mentions (an entity is created on its first
// mention, staged (no reader sees it) and `dirty` until the maintainer has given it its type,
// name, description and embedding: entity_graph/update_entities publishes it),
// co-occurrence strengths added to the entities' CO_OCCURS relationships (strength in
// millionths, windows counted; weight = s / (s + 1)), kept on the chunk to be subtracted
// again; each document records the version it was linked at.
// mode: write
// params:
//   $namespace  STRING     tenant
//   $chunks     LIST<MAP>  [{chunk_id, mentions: [{entity_id, key, count, first}], pairs: [{a, b, strength, windows}]}]
//   $documents  LIST<MAP>  [{id, content_hash}]
// returns: chunks INTEGER, documents INTEGER
// browser: :params {namespace: 'demo', chunks: [], documents: []}
CALL () {
  UNWIND $chunks AS row
  MATCH (c:Chunk {id: row.chunk_id})
  WHERE c.namespace = $namespace
  CALL (c, row) {
    UNWIND row.mentions AS m
    MERGE (e:Entity {id: m.entity_id})
      ON CREATE SET e.staged_namespace = $namespace, e.name_key = m.key, e.name = m.key, e.type = 'OTHER',
                    e.description = '', e.maintained = true
    WITH c, e, m WHERE e.namespace = $namespace OR e.staged_namespace = $namespace
    MERGE (c)-[r:MENTIONS]->(e)
    SET r.count = m.count, r.first = m.first, r.extracted = true, e.dirty = true
  }
  CALL (row) {
    UNWIND row.pairs AS p
    MATCH (a:Entity {id: p.a})
    WHERE a.namespace = $namespace OR a.staged_namespace = $namespace
    MATCH (b:Entity {id: p.b})
    WHERE b.namespace = $namespace OR b.staged_namespace = $namespace
    MERGE (a)-[r:RELATED_TO {relation_key: 'CO_OCCURS'}]->(b)
      ON CREATE SET r.type = 'CO_OCCURS', r.namespace = $namespace, r.origin = 'extraction', r.strength = 0, r.windows = 0
    SET r.strength = coalesce(r.strength, 0) + p.strength, r.windows = coalesce(r.windows, 0) + p.windows,
        r.changed = true
  }
  SET c.pair_a = [p IN row.pairs | p.a], c.pair_b = [p IN row.pairs | p.b],
      c.pair_strength = [p IN row.pairs | p.strength], c.pair_windows = [p IN row.pairs | p.windows],
      c.links_dirty = true
  RETURN count(c) AS chunks
}
CALL () {
  UNWIND $documents AS row
  MATCH (d:Document {id: row.id})
  WHERE d.namespace = $namespace AND d.content_hash = row.content_hash
  SET d.entities_hash = row.content_hash
  RETURN count(d) AS documents
}
RETURN chunks, documents
