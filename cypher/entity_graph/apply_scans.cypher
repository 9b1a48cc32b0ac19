// Add chunks' name scans to the namespace's name statistics: each chunk keeps its scan (to
// subtract it again when it goes) and each name it writes gets the chunk's counts added. A
// chunk already scanned is skipped, so a repeat changes nothing. A name that enters the
// vocabulary (first written as a name, or as a title), or a vocabulary name written in a new
// form, is marked `entered`, its entity (if any)
// `dirty` (its type may change), and moves the
// vocabulary generation; the maintainer then links the older documents that write it.
// Names are (:EntityName) nodes, one per normalised name, with forms and their counts.
// mode: write
// params:
//   $namespace  STRING     tenant
//   $rows       LIST<MAP>  [{chunk_id, names: [{id, key, form, support, person, location, weak, occurrences, titles}]}]
// returns: scanned INTEGER, entered INTEGER
// browser: :params {namespace: 'demo', rows: []}
UNWIND $rows AS row
MATCH (c:Chunk {id: row.chunk_id})
WHERE c.namespace = $namespace AND c.name_keys IS NULL
SET c.name_keys = [n IN row.names | n.key],
    c.name_forms = [n IN row.names | n.form],
    c.name_stats = reduce(acc = [], n IN row.names | acc + [n.support, n.person, n.location, n.weak, n.occurrences, n.titles])
WITH c, row
CALL (c, row) {
  UNWIND row.names AS s
  MERGE (n:EntityName {id: s.id})
    ON CREATE SET n.namespace = $namespace, n.key = s.key, n.support = 0, n.person = 0, n.location = 0,
                  n.weak = 0, n.occurrences = 0, n.titles = 0, n.given = false, n.accepted = false,
                  n.forms = [], n.form_counts = []
  WITH n, s WHERE n.namespace = $namespace
  // a vocabulary name written in a form no chunk wrote before matches text it did not: its
  // writers are linked again, as when a name enters
  WITH n, s, n.accepted AND NOT any(i IN range(0, size(n.forms) - 1)
                                    WHERE n.form_counts[i] > 0 AND toLower(n.forms[i]) = toLower(s.form)) AS new_form
  SET n.support = n.support + s.support, n.person = n.person + s.person, n.location = n.location + s.location,
      n.weak = n.weak + s.weak, n.occurrences = n.occurrences + s.occurrences, n.titles = n.titles + s.titles,
      n.form_counts = CASE WHEN s.form IN n.forms
                           THEN [i IN range(0, size(n.forms) - 1) | n.form_counts[i] + CASE WHEN n.forms[i] = s.form THEN 1 ELSE 0 END]
                           ELSE n.form_counts + [1] END,
      n.forms = CASE WHEN s.form IN n.forms THEN n.forms ELSE n.forms + [s.form] END
  WITH n, NOT n.accepted AND (n.support + n.titles > 0 OR n.given) AS enters, new_form
  SET n.accepted = n.accepted OR enters,
      n.mark = CASE WHEN enters OR new_form THEN 'entered' ELSE n.mark END
  WITH n, enters OR new_form AS enters
  CALL (n) {
    MATCH (e:Entity {namespace: $namespace, name_key: n.key})
    SET e.dirty = true, e.touches = coalesce(e.touches, 0) + 1
  }
  RETURN count(CASE WHEN enters THEN 1 END) AS entered
}
WITH count(c) AS scanned, sum(entered) AS entered
OPTIONAL MATCH (k:KgragMeta {key: 'entity-graph:' + $namespace})
SET k.generation = k.generation + CASE WHEN entered > 0 THEN 1 ELSE 0 END
RETURN scanned, entered
