// Create or update many documents of one namespace (their chunks follow in chunks/upsert_chunks,
// then documents/drop_stale_chunks removes what the new versions no longer have). Returns, for
// each document written, the content hash it had before (null for a new one). A document id
// held by another namespace is left alone and missing from `written`.
// mode: write
// params:
//   $namespace  STRING     tenant
//   $documents  LIST<MAP>  [{id, props: {source, title, content, content_hash, created_at, metadata}}]
// returns: written LIST<MAP>
// browser: :params {namespace: 'demo', documents: [{id: 'doc_1', props: {source: 'a.txt', title: 'A', content: 'x', content_hash: 'h', created_at: 0, metadata: '{}'}}]}
UNWIND $documents AS doc
MERGE (d:Document {id: doc.id})
  ON CREATE SET d.namespace = $namespace
// a write before the namespace test: a node another transaction deleted meanwhile (its
// properties then read as null) fails here with EntityNotFound, which the runner retries,
// instead of passing for a document of another namespace
SET d.namespace = coalesce(d.namespace, $namespace)
WITH d, doc, d.content_hash AS before
WHERE d.namespace = $namespace
SET d += doc.props
RETURN collect({id: d.id, before: before}) AS written
