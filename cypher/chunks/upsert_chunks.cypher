// Create or update chunks of one document of the namespace with HAS_CHUNK and CHILD_OF links.
// Embeddings are stored with setNodeVectorProperty (float32, half the size of a list of doubles).
// A parent row may come after its children: MERGE on the parent id makes the order irrelevant.
// A document of another namespace, and chunk ids that belong to another document or namespace,
// are left untouched (and not counted): the namespace is enforced here, not only in Python.
// mode: write
// params:
//   $namespace    STRING     tenant
//   $document_id  STRING     owning document id
//   $rows         LIST<MAP>  [{id, props: {...}, embedding: LIST<FLOAT>|null, parent_id: STRING|null}]
// returns: written INTEGER
// browser: :params {namespace: 'default', document_id: 'doc_1', rows: [{id: 'c1', props: {content: 'x', chunk_index: 0}, embedding: null, parent_id: null}]}
MATCH (d:Document {id: $document_id})
WHERE d.namespace = $namespace
UNWIND $rows AS row
MERGE (c:Chunk {id: row.id})
  ON CREATE SET c.namespace = $namespace, c.document_id = $document_id
WITH d, c, row
WHERE c.namespace = $namespace AND c.document_id = $document_id
SET c += row.props, c.namespace = $namespace, c.document_id = $document_id
MERGE (d)-[:HAS_CHUNK]->(c)
WITH c, row
CALL (c, row) {
  WITH c, row WHERE row.embedding IS NOT NULL
  CALL db.create.setNodeVectorProperty(c, 'embedding', row.embedding)
}
CALL (c, row) {
  WITH c, row WHERE row.parent_id IS NOT NULL
  MERGE (p:Chunk {id: row.parent_id})
    ON CREATE SET p.namespace = $namespace, p.document_id = $document_id
  WITH c, p WHERE p.namespace = $namespace AND p.document_id = $document_id
  MERGE (c)-[:CHILD_OF]->(p)
}
RETURN count(c) AS written
