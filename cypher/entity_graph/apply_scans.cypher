// Add chunks' name scans to the namespace's name statistics: each chunk keeps its scan (to
// subtract it again when it goes) and each name it writes gets the chunk's counts added. A
// chunk already scanned is skipped, so a repeat changes nothing. A name that enters the
// vocabulary (first written as a name, or as a title), or a vocabulary name written in a new
// form, is marked `entered`, its entity (if any)
// `dirty` (its type may change), and moves the
// vocabulary generation; the maintainer then links the older documents that write it.
// Names are (:EntityName) nodes, one per normalised name, with forms and their counts and the
// words of the key (`first`, `words`: linking looks the names a text may write up by them). A chunk
// scanned gets the label NameScanned, which puts it in the chunk_names full-text index. The
// batch's counts are summed per name first, so a name many chunks write is updated once, and
// the names are taken in id order (two ingests lock them in the same order).
// mode: write
// params:
//   $namespace  STRING     tenant
//   $rows       LIST<MAP>  [{chunk_id, names: [{id, key, first, words, form, support, person, location, weak, occurrences, titles}]}]
// returns: scanned INTEGER, entered INTEGER
// browser: :params {namespace: 'demo', rows: []}
UNWIND $rows AS row
MATCH (c:Chunk {id: row.chunk_id})
WHERE c.namespace = $namespace AND c.name_keys IS NULL
SET c:NameScanned, c.name_keys = [n IN row.names | n.key],
    c.name_forms = [n IN row.names | n.form],
    c.name_stats = reduce(acc = [], n IN row.names | acc + [n.support, n.person, n.location, n.weak, n.occurrences, n.titles])
WITH count(c) AS scanned, collect(row.names) AS scans
CALL (scans) {
  UNWIND scans AS names
  UNWIND names AS s
  WITH s.id AS id, s.key AS key, s.first AS first, s.words AS words, s.form AS form, count(*) AS times, sum(s.support) AS support, sum(s.person) AS person,
       sum(s.location) AS location, sum(s.weak) AS weak, sum(s.occurrences) AS occurrences, sum(s.titles) AS titles
  ORDER BY id, form
  WITH id, key, first, words, collect([form, times]) AS forms, sum(support) AS support, sum(person) AS person,
       sum(location) AS location, sum(weak) AS weak, sum(occurrences) AS occurrences, sum(titles) AS titles
  ORDER BY id
  MERGE (n:EntityName {id: id})
    ON CREATE SET n.namespace = $namespace, n.key = key, n.first = first, n.words = words, n.support = 0, n.person = 0, n.location = 0,
                  n.weak = 0, n.occurrences = 0, n.titles = 0, n.given = false, n.accepted = false,
                  n.forms = [], n.form_counts = []
  WITH n, forms, support, person, location, weak, occurrences, titles WHERE n.namespace = $namespace
  // a vocabulary name written in a form no chunk wrote before matches text it did not: the
  // writers of that form are linked again (`mark_forms`; null: of every form, as when a name
  // enters)
  WITH n, forms, support, person, location, weak, occurrences, titles,
       [f IN forms WHERE n.accepted AND NOT any(i IN range(0, size(n.forms) - 1)
                                                WHERE n.form_counts[i] > 0 AND toLower(n.forms[i]) = toLower(f[0])) | f[0]] AS new_forms,
       reduce(acc = {forms: n.forms, counts: n.form_counts}, f IN forms |
              CASE WHEN f[0] IN acc.forms
                   THEN {forms: acc.forms,
                         counts: [i IN range(0, size(acc.forms) - 1) | acc.counts[i] + CASE WHEN acc.forms[i] = f[0] THEN f[1] ELSE 0 END]}
                   ELSE {forms: acc.forms + [f[0]], counts: acc.counts + [f[1]]} END) AS merged
  SET n.support = n.support + support, n.person = n.person + person, n.location = n.location + location,
      n.weak = n.weak + weak, n.occurrences = n.occurrences + occurrences, n.titles = n.titles + titles,
      n.forms = merged.forms, n.form_counts = merged.counts
  WITH n, NOT n.accepted AND (n.support + n.titles > 0 OR n.given) AS enters, new_forms, size(new_forms) > 0 AS new_form
  // a mark of every form stays one; a mark of some forms (or none yet) adds the new ones
  WITH n, enters, new_form,
       CASE WHEN enters OR (n.mark IS NOT NULL AND n.mark_forms IS NULL) THEN null
            WHEN new_form THEN coalesce(n.mark_forms, []) + new_forms
            ELSE n.mark_forms END AS mark_forms
  SET n.accepted = n.accepted OR enters,
      n.mark = CASE WHEN enters OR new_form THEN 'entered' ELSE n.mark END,
      n.mark_forms = mark_forms,
      // counts the marks, so that a maintainer clears only the mark it handled
      n.marked = CASE WHEN enters OR new_form THEN coalesce(n.marked, 0) + 1 ELSE n.marked END
  WITH n, enters OR new_form AS enters
  CALL (n) {
    MATCH (e:Entity {namespace: $namespace, name_key: n.key})
    SET e.dirty = true, e.touches = coalesce(e.touches, 0) + 1
  }
  RETURN count(CASE WHEN enters THEN 1 END) AS entered
}
OPTIONAL MATCH (k:KgragMeta {key: 'entity-graph:' + $namespace})
SET k.generation = k.generation + CASE WHEN entered > 0 THEN 1 ELSE 0 END
RETURN scanned, entered
