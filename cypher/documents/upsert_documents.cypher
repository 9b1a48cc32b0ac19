// Create or update many documents of one namespace (their chunks follow in chunks/upsert_chunks,
// then documents/drop_stale_chunks removes what the new versions no longer have). Returns, for
// each document written, the content hash it had before (null for a new one). A document id
// held by another namespace is left alone and missing from `written`; one that a concurrent
// delete removed while this statement ran is listed in `vanished` (the caller runs the
// transaction again, which then creates it afresh).
// mode: write
// params:
//   $namespace  STRING     tenant
//   $documents  LIST<MAP>  [{id, props: {source, title, content, content_hash, created_at, metadata}}]
// returns: written LIST<MAP>, vanished LIST<STRING>
// browser: :params {namespace: 'demo', documents: [{id: 'doc_1', props: {source: 'a.txt', title: 'A', content: 'x', content_hash: 'h', created_at: 0, metadata: '{}'}}]}
UNWIND $documents AS doc
MERGE (d:Document {id: doc.id})
  ON CREATE SET d.namespace = $namespace
// a write before the namespace test takes the node's lock. A node another transaction deleted
// meanwhile fails it with EntityNotFound (retried by the runner) or, as Neo4j 5 also does,
// lets it pass and then reads as all-null: told apart from another tenant's document by its id
SET d.namespace = coalesce(d.namespace, $namespace)
WITH d, doc, d.content_hash AS before, d.id IS NULL AS vanished, d.namespace = $namespace AS ours
CALL (d, doc, ours) {
  WITH d, doc WHERE ours
  SET d += doc.props
}
RETURN collect(CASE WHEN ours THEN {id: doc.id, before: before} END) AS written,
       collect(CASE WHEN vanished THEN doc.id END) AS vanished
