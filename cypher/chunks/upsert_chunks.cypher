// Create or update chunks of one document with HAS_CHUNK and CHILD_OF links. Embeddings are
// stored with setNodeVectorProperty (float32, half the size of a list of doubles).
// A parent row may come after its children: MERGE on the parent id makes the order irrelevant.
// mode: write
// params:
//   $document_id  STRING     owning document id
//   $rows         LIST<MAP>  [{id, props: {...}, embedding: LIST<FLOAT>|null, parent_id: STRING|null}]
// returns: written INTEGER
// browser: :params {document_id: 'doc_1', rows: [{id: 'c1', props: {namespace: 'default', content: 'x', chunk_index: 0}, embedding: null, parent_id: null}]}
MATCH (d:Document {id: $document_id})
UNWIND $rows AS row
MERGE (c:Chunk {id: row.id})
SET c += row.props
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
