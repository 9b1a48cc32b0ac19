// Create or update chunks of documents of one namespace, with HAS_CHUNK and CHILD_OF links.
// Rows may belong to several documents (a folder ingest writes many per transaction); a row
// whose document is not in the namespace is skipped. Embeddings are stored with
// setNodeVectorProperty (float32, half the size of a list of doubles). A parent row may come
// after its children: MERGE on the parent id makes the order irrelevant.
// mode: write
// params:
//   $namespace  STRING     tenant
//   $rows       LIST<MAP>  [{id, document_id, props: {...}, embedding: LIST<FLOAT>|null, parent_id: STRING|null}]
// returns: written INTEGER
// browser: :params {namespace: 'default', rows: [{id: 'c1', document_id: 'doc_1', props: {content: 'x', chunk_index: 0}, embedding: null, parent_id: null}]}
UNWIND $rows AS row
MATCH (d:Document {id: row.document_id})
WHERE d.namespace = $namespace
MERGE (c:Chunk {id: row.id})
SET c += row.props, c.namespace = $namespace, c.document_id = row.document_id
MERGE (d)-[:HAS_CHUNK]->(c)
WITH c, row
CALL (c, row) {
  WITH c, row WHERE row.embedding IS NOT NULL
  CALL db.create.setNodeVectorProperty(c, 'embedding', row.embedding)
}
CALL (c, row) {
  WITH c, row WHERE row.parent_id IS NOT NULL
  MERGE (p:Chunk {id: row.parent_id})
  MERGE (c)-[:CHILD_OF]->(p)
}
RETURN count(c) AS written
