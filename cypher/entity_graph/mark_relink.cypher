// Mark chunks to be linked again (`relink`: a name they may write entered or left the
// vocabulary, entity_graph/chunks_writing), and forget names' entered/left marks once that is
// recorded (unless marked again since they were read); a name no chunk writes any more goes then. A chunk's document is linked again as
// a whole instead when it holds no record of the forms its chunks write (linked before
// documents kept one: the chunks' share of its context cannot be taken out one by one).
// mode: write
// params:
//   $namespace  STRING        tenant
//   $chunk_ids  LIST<STRING>  linked chunks to link again
//   $names      LIST<MAP>     [{key, marked}] names whose marks are handled, with the count of marks read
// returns: chunks INTEGER, documents INTEGER
// browser: :params {namespace: 'demo', chunk_ids: [], names: []}
CALL () {
  UNWIND $names AS row
  MATCH (n:EntityName {namespace: $namespace, key: row.key})
  // a mark another ingest made after this one read it (a new form, the name leaving) stays
  WITH n WHERE coalesce(n.marked, 0) = row.marked
  SET n.mark = null, n.mark_forms = null
  // a name that left because no chunk writes it any more goes, now that its writers are sent
  // back to linking: a full build never makes it
  WITH n WHERE NOT n.accepted AND NOT n.given AND all(x IN n.form_counts WHERE x <= 0)
  DELETE n
}
UNWIND $chunk_ids AS id
MATCH (c:Chunk {id: id})
WHERE c.namespace = $namespace AND c.pair_a IS NOT NULL
MATCH (d:Document {id: c.document_id})
WHERE d.namespace = $namespace
WITH c, d, d.link_forms IS NULL AS whole
SET c.relink = CASE WHEN whole THEN c.relink ELSE true END,
    d.entities_hash = CASE WHEN whole THEN null ELSE d.entities_hash END
RETURN count(DISTINCT CASE WHEN NOT whole THEN c END) AS chunks, count(DISTINCT CASE WHEN whole THEN d END) AS documents
