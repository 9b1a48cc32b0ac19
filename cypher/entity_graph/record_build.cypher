// Record that the namespace's entity graph is up to date (the time, for `kgrag entities
// status`), and the names the user gave (kept in the vocabulary whatever the chunks say). A
// graph made by this version records that its names carry their key's words (`name_words`) and
// that its scanned chunks are labelled for the chunk_names index (`name_scanned`).
// mode: write
// params:
//   $namespace  STRING     tenant
//   $at         STRING     ISO time
//   $names      LIST<MAP>  [{id, key, first, words, form}]
// returns: generation INTEGER
// browser: :params {namespace: 'demo', at: '2026-01-01T00:00:00Z', names: []}
MERGE (k:KgragMeta {key: 'entity-graph:' + $namespace})
  ON CREATE SET k.generation = 0, k.namespace = $namespace, k.name_words = true, k.name_scanned = true
SET k.last_build = $at
WITH k
CALL (k) {
  UNWIND $names AS s
  MERGE (n:EntityName {id: s.id})
    ON CREATE SET n.namespace = $namespace, n.key = s.key, n.first = s.first, n.words = s.words, n.support = 0, n.person = 0, n.location = 0,
                  n.weak = 0, n.occurrences = 0, n.titles = 0, n.given = false, n.accepted = false,
                  n.forms = [], n.form_counts = []
  WITH n, s WHERE n.namespace = $namespace AND NOT n.given
  SET n.given = true,
      n.forms = CASE WHEN s.form IN n.forms THEN n.forms ELSE n.forms + [s.form] END,
      n.form_counts = CASE WHEN s.form IN n.forms THEN n.form_counts ELSE n.form_counts + [0] END
  // a name given now is matched in every form it was ever written in (its forms no chunk
  // writes any more too): its writers are linked again, also when it was a name already
  SET n.accepted = true, n.mark = 'entered', n.mark_forms = null, n.marked = coalesce(n.marked, 0) + 1
  RETURN count(n) AS entered
}
SET k.generation = k.generation + CASE WHEN entered > 0 THEN 1 ELSE 0 END
RETURN k.generation AS generation
