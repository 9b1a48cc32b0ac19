// Write chunks of a large document into its staging namespace ('\u001f' + namespace + '\u001f'
// + document id: namespaces cannot hold that character, so no tenant can name it), where no
// read of the tenant sees them (every read is scoped by namespace), a few thousand per
// transaction; the document's last transaction (documents/publish_staged_chunks) moves them
// all at once. Chunks already in the tenant (unchanged ids of the document's stored version)
// are left as they are and returned as `kept`: the publishing transaction rewrites their
// properties. Rows of another document, and chunk ids held by another document or namespace,
// are left untouched.
// mode: write
// params:
//   $namespace    STRING     tenant
//   $document_id  STRING     the large document
//   $rows         LIST<MAP>  [{id, document_id, props: {...}, embedding: LIST<FLOAT>|null, parent_id: STRING|null}]
//   $vector_property  STRING  property holding the namespace's vectors (its embedding model's; `kgrag cypher params` fills it)
// returns: written INTEGER, kept LIST<STRING>
// browser: :params {namespace: 'demo', document_id: 'doc_44baee2d8286fcbe2de5746f8d66be0f', rows: [{id: 'c1', document_id: 'doc_44baee2d8286fcbe2de5746f8d66be0f', props: {content: 'x', chunk_index: 0}, embedding: null, parent_id: null}], vector_property: 'embedding'}
WITH '\u001f' + $namespace + '\u001f' + $document_id AS staging
UNWIND $rows AS row
WITH staging, row WHERE row.document_id = $document_id
MERGE (c:Chunk {id: row.id})
  ON CREATE SET c.namespace = staging
WITH staging, c, row, c.namespace = staging AS staged,
     c.namespace = $namespace AND c.document_id = $document_id AS kept
CALL (c, row, staged) {
  WITH c, row WHERE staged
  SET c += row.props, c.document_id = row.document_id
  WITH c, row WHERE row.embedding IS NOT NULL
  CALL db.create.setNodeVectorProperty(c, $vector_property, row.embedding)
}
CALL (staging, c, row, staged) {
  WITH staging, c, row WHERE staged AND row.parent_id IS NOT NULL
  MERGE (p:Chunk {id: row.parent_id})
    ON CREATE SET p.namespace = staging
  WITH c, p WHERE p.namespace = staging
  MERGE (c)-[:CHILD_OF]->(p)
}
RETURN count(CASE WHEN staged THEN 1 END) AS written, collect(CASE WHEN kept THEN c.id END) AS kept
