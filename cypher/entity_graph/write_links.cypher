// Write what documents' chunks contribute to the entity graph: the entities they mention (a
// new one is staged, no reader sees it, and `dirty` until the maintainer has given it its
// type, name, description and embedding: entity_graph/update_entities publishes it;
// `touches` counts the marks), the mentions (each with the entity's `touches` when written,
// `at`: newer than its last update), the co-occurrence strengths added to the entities'
// CO_OCCURS relationships (summed over the batch: strength in millionths, sentences counted),
// with the weight s / (s + 1) and the description they make with the entities' names now (a
// new entity is created with its display name; one renamed later has its relationships
// described again: entity_graph/update_entities); a relationship left with no sentence goes;
// and on each
// chunk what it added, to be subtracted again, its share of its document's link context
// (`link_forms`, `link_counts`: each form it writes, capitalised and lower-case occurrences)
// and where it stood in the order of mentions (`linked_at`: time, index), counting the writes
// (`links_written`: a difference is taken from one of them); each document its
// link context (every form its chunks write: capitalised, lower case, chunks), and, when
// linked as a whole, the version it was linked at; every write counts on the document
// (`links_version`). Only chunks whose links changed are given. A chunk either had its old
// links taken back first (entity_graph/unlink_chunks) and is given whole, or is given as the
// difference from what it holds: the mentions it no longer has ($dropped: they go, their
// entities are marked as a chunk losing them), those that came or changed, and what its
// co-occurrences add or take away. The marks of chunks to be linked again ($settled) go.
// mode: write
// params:
//   $namespace  STRING     tenant
//   $entities   LIST<MAP>  [{id, key, name, source, place}] every entity mentioned, once, with its display name, its earliest chunk of these and that chunk's place in the order of mentions
//   $mentions   LIST<MAP>  [{chunk_id, entity_id, count, first}] new or changed
//   $dropped    LIST<MAP>  [{chunk_id, entity_id}] mentions chunks no longer have
//   $pairs      LIST<MAP>  [{a, b, strength, windows}] summed over the chunks, once per pair (negative: taken away)
//   $chunks     LIST<MAP>  [{chunk_id, pair_a, pair_b, pair_strength, pair_windows, link_forms, link_counts}] what each chunk added
//   $documents  LIST<MAP>  [{id, content_hash, whole, link_forms, link_counts}]
//   $settled    LIST<STRING>  chunks whose `relink` mark is handled
// returns: mentions INTEGER, documents INTEGER
// browser: :params {namespace: 'demo', entities: [], mentions: [], dropped: [], pairs: [], chunks: [], documents: [], settled: []}
CALL () {
  UNWIND $dropped AS row
  MATCH (c:Chunk {id: row.chunk_id})-[m:MENTIONS]->(e:Entity {id: row.entity_id})
  WHERE c.namespace = $namespace AND coalesce(e.namespace, e.staged_namespace) = $namespace
  // as entity_graph/unlink_chunks marks what a chunk stops mentioning
  SET e.dirty = true, e.lost = CASE WHEN c.id IN [e.source_chunk_id, e.new_source] THEN true ELSE e.lost END,
      e.touches = coalesce(e.touches, 0) + 1, e.rechunked = true
  DELETE m
}
CALL () {
  UNWIND $entities AS row
  MERGE (e:Entity {id: row.id})
    ON CREATE SET e.staged_namespace = $namespace, e.name_key = row.key, e.name = row.name, e.type = 'OTHER',
                  e.description = '', e.maintained = true
  WITH e, row WHERE coalesce(e.namespace, e.staged_namespace) = $namespace
  SET e.dirty = true, e.touches = coalesce(e.touches, 0) + 1,
      // the earliest chunk that mentions it since its last update (`new_place` orders chunks
      // as the description's choice does): the maintainer compares it with the source chunk
      // instead of reading every mention of an entity many chunks mention
      e.new_source = CASE WHEN e.new_place IS NULL OR row.place < e.new_place THEN row.source ELSE e.new_source END,
      e.new_place = CASE WHEN e.new_place IS NULL OR row.place < e.new_place THEN row.place ELSE e.new_place END
}
CALL () {
  UNWIND $mentions AS row
  MATCH (c:Chunk {id: row.chunk_id})
  WHERE c.namespace = $namespace
  MATCH (e:Entity {id: row.entity_id})
  WHERE coalesce(e.namespace, e.staged_namespace) = $namespace
  MERGE (c)-[r:MENTIONS]->(e)
  SET r.count = row.count, r.first = row.first, r.extracted = true, r.at = e.touches
  RETURN count(r) AS mentions
}
CALL () {
  UNWIND $pairs AS p
  MATCH (a:Entity {id: p.a})
  WHERE coalesce(a.namespace, a.staged_namespace) = $namespace
  MATCH (b:Entity {id: p.b})
  WHERE coalesce(b.namespace, b.staged_namespace) = $namespace
  MERGE (a)-[r:RELATED_TO {relation_key: 'CO_OCCURS'}]->(b)
    ON CREATE SET r.type = 'CO_OCCURS', r.namespace = $namespace, r.origin = 'extraction', r.strength = 0, r.windows = 0
  SET r.strength = coalesce(r.strength, 0) + p.strength, r.windows = coalesce(r.windows, 0) + p.windows
  WITH a, r, b, toFloat(r.strength) / 1000000.0 AS s
  // as entity_graph/settle_relations words it
  SET r.weight = s / (s + 1.0),
      r.description = a.name + ' and ' + b.name + ' appear together in ' + toString(r.windows) + ' sentence'
                      + CASE WHEN r.windows = 1 THEN '' ELSE 's' END,
      r.metadata = '{"count": ' + toString(r.windows) + ', "window": "sentence"}'
  WITH r WHERE r.windows <= 0
  DELETE r
}
CALL () {
  UNWIND $chunks AS row
  MATCH (c:Chunk {id: row.chunk_id})
  WHERE c.namespace = $namespace
  SET c.pair_a = row.pair_a, c.pair_b = row.pair_b, c.pair_strength = row.pair_strength,
      c.pair_windows = row.pair_windows, c.links_dirty = true,
      c.link_forms = row.link_forms, c.link_counts = row.link_counts,
      c.links_written = coalesce(c.links_written, 0) + 1,
      // where the chunk stood in the order of mentions when linked: a new version of its
      // document moves it (time, index), and then it is linked again
      c.linked_at = [c.created_at, c.chunk_index]
}
CALL () {
  UNWIND $settled AS id
  MATCH (c:Chunk {id: id})
  WHERE c.namespace = $namespace
  SET c.relink = null
}
CALL () {
  UNWIND $documents AS row
  MATCH (d:Document {id: row.id})
  WHERE d.namespace = $namespace AND d.content_hash = row.content_hash
  SET d.entities_hash = CASE WHEN row.whole THEN row.content_hash ELSE d.entities_hash END,
      d.link_forms = row.link_forms, d.link_counts = row.link_counts,
      d.links_version = coalesce(d.links_version, 0) + 1
  RETURN count(d) AS documents
}
RETURN mentions, documents
