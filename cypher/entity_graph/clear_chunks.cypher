// One page of clearing a namespace's entity graph from its chunks, in id order after $after
// (each page starts where the last ended, so clearing a million chunks reads each once): the
// `references` edges of entity origin they start, the mentions extraction wrote, and the
// chunks' records of the graph (name scans, pair sums, link context, marks; the NameScanned
// label, which puts a chunk in the chunk_names index). The caller repeats it from the last id
// until a page is empty, then clears the rest (entity_graph/clear).
// mode: write
// params:
//   $namespace   STRING   tenant
//   $after       STRING   the last chunk id of the previous page ('' for the first)
//   $batch_size  INTEGER  chunks per transaction
// returns: chunks INTEGER, last STRING, removed INTEGER
// browser: :params {namespace: 'scratch', after: '', batch_size: 2000}
MATCH (c:Chunk)
USING INDEX c:Chunk(id)
WHERE c.id > $after AND c.namespace = $namespace
WITH c ORDER BY c.id LIMIT toInteger($batch_size)
CALL (c) {
  OPTIONAL MATCH (c)-[r:RELATES_TO {relation: 'references'}]->(:Chunk)
  WHERE r.origin = 'entities'
  DELETE r
  RETURN count(r) AS edges
}
CALL (c) {
  OPTIONAL MATCH (c)-[m:MENTIONS]->(:Entity)
  WHERE m.extracted
  DELETE m
  RETURN count(m) AS mentions
}
WITH c, edges + mentions AS removed,
     c.name_keys IS NOT NULL OR c.pair_a IS NOT NULL OR c.links_dirty IS NOT NULL OR c.relink IS NOT NULL
       OR c.link_forms IS NOT NULL OR c:NameScanned AS recorded
SET c.name_keys = null, c.name_forms = null, c.name_stats = null, c.pair_a = null, c.pair_b = null,
    c.pair_strength = null, c.pair_windows = null, c.links_dirty = null, c.relink = null,
    c.link_forms = null, c.link_counts = null
REMOVE c:NameScanned
RETURN count(c) AS chunks, max(c.id) AS last, sum(removed) + count(CASE WHEN recorded THEN 1 END) AS removed
