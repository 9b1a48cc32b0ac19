// Take back what chunks contributed to the entity graph, exactly: their co-occurrence
// strengths are subtracted from the relationships they added to, whose weight and
// description follow (a relationship no chunk supports any more goes, unless a triple wrote
// it), their mentions go, and the entities they
// mentioned are marked for the maintainer (`dirty`: type, description, chunk links and
// community to bring up to date; an entity no chunk mentions goes then; `rechunked`: a chunk
// no longer mentions it, so the `references` edges of its other chunks are decided again
// even if its chunk count stays). A chunk linked again in the same transaction keeps the
// mentions $kept names (entity_graph/write_links writes them again): those mark nothing. With $forget_scan
// (the chunks are about to be deleted) their name scans are subtracted from the name
// statistics too; a name no chunk writes any more leaves the vocabulary (`left`), one that
// lost a form is marked to have its writers linked again, and the generation moves. Chunks:
// those of $document_ids, or only their stale ones (left over from an older version of the
// document) with $stale_only, or only $chunk_ids of them. With $limit, at most that many
// chunks that still hold co-occurrences or a name scan (a large document deleted in bounded
// transactions: their mentions stay until the chunks go, so the delete finds its orphans).
// mode: write
// params:
//   $namespace     STRING        tenant
//   $document_ids  LIST<STRING>  documents whose chunks to unlink
//   $stale_only    BOOLEAN       only the chunks the documents' current version no longer has
//   $chunk_ids     LIST<STRING>  only these chunks of the documents (null = every chunk)
//   $forget_scan   BOOLEAN       subtract the chunks' name scans as well
//   $limit         INTEGER       at most this many chunks with co-occurrences or a scan (null = all)
//   $kept          MAP           chunk id -> the entity ids it mentions again ({} = none)
// returns: chunks INTEGER, left INTEGER
// browser: :params {namespace: 'demo', document_ids: [], stale_only: false, chunk_ids: null, forget_scan: false, limit: null, kept: {}}
UNWIND $document_ids AS id
MATCH (d:Document {id: id})-[:HAS_CHUNK]->(c:Chunk)
WHERE d.namespace = $namespace AND c.namespace = $namespace
  AND (NOT $stale_only OR c.document_hash IS NULL OR c.document_hash <> d.content_hash)
  AND ($chunk_ids IS NULL OR c.id IN $chunk_ids)
  // a chunk never linked nor scanned has nothing to take back
  AND (c.pair_a IS NOT NULL OR ($forget_scan AND c.name_keys IS NOT NULL) OR EXISTS { (c)-[:MENTIONS]->() })
  AND ($limit IS NULL OR c.pair_a IS NOT NULL OR ($forget_scan AND c.name_keys IS NOT NULL))
WITH DISTINCT c
LIMIT toInteger(coalesce($limit, 9223372036854775807))
CALL (c) {
  UNWIND range(0, size(coalesce(c.pair_a, [])) - 1) AS i
  MATCH (a:Entity {id: c.pair_a[i]})-[r:RELATED_TO {relation_key: 'CO_OCCURS'}]->(b:Entity {id: c.pair_b[i]})
  WHERE r.namespace = $namespace AND r.strength IS NOT NULL
  SET r.strength = r.strength - c.pair_strength[i], r.windows = r.windows - c.pair_windows[i]
  WITH a, r, b, toFloat(r.strength) / 1000000.0 AS s
  // weight and description from what is left, as entity_graph/settle_relations words them
  SET r.weight = s / (s + 1.0),
      r.description = a.name + ' and ' + b.name + ' appear together in ' + toString(r.windows) + ' sentence'
                      + CASE WHEN r.windows = 1 THEN '' ELSE 's' END,
      r.metadata = '{"count": ' + toString(r.windows) + ', "window": "sentence"}'
  WITH r WHERE r.windows <= 0
  DELETE r
}
CALL (c) {
  MATCH (c)-[m:MENTIONS]->(e:Entity)
  WHERE coalesce(e.namespace, e.staged_namespace) = $namespace
  // only losing its source chunk (or the earliest of those written since its last update)
  // can move an entity's earliest mention (then all its mentions are compared again); losing
  // any other leaves the earliest where it was
  SET e.dirty = true, e.lost = CASE WHEN c.id IN [e.source_chunk_id, e.new_source] THEN true ELSE e.lost END,
      e.touches = coalesce(e.touches, 0) + 1,
      e.rechunked = CASE WHEN NOT e.id IN coalesce($kept[c.id], []) THEN true ELSE e.rechunked END
  // chunks about to be deleted keep theirs: the delete finds the entities it orphans by them
  WITH m WHERE NOT $forget_scan
  DELETE m
}
SET c.pair_a = null, c.pair_b = null, c.pair_strength = null, c.pair_windows = null, c.links_dirty = true,
    c.link_forms = null, c.link_counts = null, c.links_written = coalesce(c.links_written, 0) + 1
WITH c
CALL (c) {
  WITH c WHERE $forget_scan AND c.name_keys IS NOT NULL
  UNWIND range(0, size(c.name_keys) - 1) AS i
  MATCH (n:EntityName {namespace: $namespace, key: c.name_keys[i]})
  WITH n, c.name_forms[i] AS form, c.name_stats[6 * i .. 6 * i + 6] AS s
  SET n.support = n.support - s[0], n.person = n.person - s[1], n.location = n.location - s[2],
      n.weak = n.weak - s[3], n.occurrences = n.occurrences - s[4], n.titles = n.titles - s[5],
      n.form_counts = [i IN range(0, size(n.forms) - 1) | n.form_counts[i] - CASE WHEN n.forms[i] = form THEN 1 ELSE 0 END]
  WITH n, form, n.accepted AND n.support + n.titles <= 0 AND NOT n.given AS leaves,
       // a form no chunk writes any more no longer matches: the name's writers are linked again
       n.accepted AND any(i IN range(0, size(n.forms) - 1) WHERE n.forms[i] = form AND n.form_counts[i] <= 0) AS form_gone
  // the writers of a name that leaves are linked again, of a form gone only that form's
  // (`mark_forms`, null for every form: a mark of every form stays one)
  WITH n, leaves, form_gone, form,
       CASE WHEN leaves OR (n.mark IS NOT NULL AND n.mark_forms IS NULL) THEN null
            WHEN form_gone THEN coalesce(n.mark_forms, []) + [form]
            ELSE n.mark_forms END AS mark_forms
  SET n.accepted = n.accepted AND NOT leaves,
      n.mark = CASE WHEN leaves THEN 'left' WHEN form_gone AND n.mark IS NULL THEN 'entered' ELSE n.mark END,
      n.mark_forms = mark_forms,
      n.marked = CASE WHEN leaves OR form_gone THEN coalesce(n.marked, 0) + 1 ELSE n.marked END
  WITH n, leaves, form_gone
  CALL (n) {
    MATCH (e:Entity {namespace: $namespace, name_key: n.key})
    SET e.dirty = true, e.touches = coalesce(e.touches, 0) + 1
  }
  // a name never in the vocabulary that no chunk writes any more goes (one that leaves it
  // goes once the maintainer has handled its mark: entity_graph/mark_pending)
  CALL (n) {
    WITH n WHERE n.mark IS NULL AND NOT n.accepted AND NOT n.given AND all(x IN n.form_counts WHERE x <= 0)
    DELETE n
  }
  RETURN count(CASE WHEN leaves THEN 1 END) AS left, count(CASE WHEN leaves OR form_gone THEN 1 END) AS moved
}
WITH c, left, moved
SET c.name_keys = CASE WHEN $forget_scan THEN null ELSE c.name_keys END,
    c.name_forms = CASE WHEN $forget_scan THEN null ELSE c.name_forms END,
    c.name_stats = CASE WHEN $forget_scan THEN null ELSE c.name_stats END
WITH count(c) AS chunks, sum(left) AS left, sum(moved) AS moved
OPTIONAL MATCH (k:KgragMeta {key: 'entity-graph:' + $namespace})
SET k.generation = k.generation + CASE WHEN moved > 0 THEN 1 ELSE 0 END
RETURN chunks, left
