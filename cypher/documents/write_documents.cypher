// Create or update many documents of one namespace, and create in the same statement the
// chunks of those that are new: the common case of a folder ingest, in one pass over the rows
// (upsert_documents then chunks/upsert_chunks MERGE and test the owner of every chunk and find
// its document again: 23-24 server CPU-s for 30,000 real-text chunks against 18 here).
// A document is new when this statement created it (no content hash before, ours, not
// vanished). Its chunks are CREATEd: a chunk id that is taken (by another document, another
// namespace, or a staged leftover of an interrupted write) fails the statement on the chunk id
// constraint, and the store rolls the transaction back and writes the documents again through
// upsert_documents and chunks/upsert_chunks, which settle every case. A document sent without
// `chunks` (null: the store sends rows with parent links that way) and every document that
// existed before get their chunks from chunks/upsert_chunks afterwards, as `created: false`
// says. Returns, as upsert_documents does, each document written with the hash it had before
// (another namespace's is missing) and the ids a concurrent delete removed meanwhile.
// mode: write
// params:
//   $namespace  STRING     tenant
//   $documents  LIST<MAP>  [{id, props: {source, title, content, content_hash, created_at, metadata}, chunks: [{id, props: {...}, embedding: LIST<FLOAT>|null}]|null}]
//   $vector_property  STRING  property holding the namespace's vectors (its embedding model's; `kgrag cypher params` fills it)
// returns: written LIST<MAP>, vanished LIST<STRING>
// browser: :params {namespace: 'demo', documents: [{id: 'doc_1', props: {source: 'a.txt', title: 'A', content: 'x', content_hash: 'h', created_at: 0, metadata: '{}'}, chunks: [{id: 'c1', props: {content: 'x', chunk_index: 0}, embedding: null}]}], vector_property: 'embedding'}
UNWIND $documents AS doc
MERGE (d:Document {id: doc.id})
  ON CREATE SET d.namespace = $namespace
// as in upsert_documents: the write takes the node's lock before the namespace test, and a
// node deleted meanwhile reads as all-null (told apart from another tenant's by its id)
SET d.namespace = coalesce(d.namespace, $namespace)
WITH d, doc, d.content_hash AS before, d.id IS NULL AS vanished, d.namespace = $namespace AS ours
WITH d, doc, before, vanished, ours,
     ours AND before IS NULL AND NOT vanished AND doc.chunks IS NOT NULL AS fresh
CALL (d, doc, ours) {
  WITH d, doc WHERE ours
  SET d += doc.props
}
CALL (d, doc, fresh) {
  WITH d, doc WHERE fresh
  UNWIND doc.chunks AS row
  CREATE (d)-[:HAS_CHUNK]->(c:Chunk {id: row.id})
  SET c += row.props, c.namespace = $namespace, c.document_id = doc.id
  WITH c, row WHERE row.embedding IS NOT NULL
  CALL db.create.setNodeVectorProperty(c, $vector_property, row.embedding)
}
RETURN collect(CASE WHEN ours THEN {id: doc.id, before: before, created: fresh} END) AS written,
       collect(CASE WHEN vanished THEN doc.id END) AS vanished
