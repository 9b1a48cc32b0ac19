// Write chunks of a large document into its staging namespace, where no read of the tenant
// sees them (every read is scoped by namespace), a few thousand per transaction; the
// document's last transaction (documents/publish_staged_chunks) moves them all at once.
// Chunks already in the tenant (unchanged ids of the document's stored version) are left as
// they are and returned as `kept`: the publishing transaction rewrites their properties.
// mode: write
// params:
//   $staging  STRING     the document's staging namespace
//   $rows     LIST<MAP>  [{id, document_id, props: {...}, embedding: LIST<FLOAT>|null, parent_id: STRING|null}]
// returns: written INTEGER, kept LIST<STRING>
// browser: :params {staging: '\u001fdemo\u001fdoc_44baee2d8286fcbe2de5746f8d66be0f', rows: [{id: 'c1', document_id: 'doc_44baee2d8286fcbe2de5746f8d66be0f', props: {content: 'x', chunk_index: 0}, embedding: null, parent_id: null}]}
UNWIND $rows AS row
MERGE (c:Chunk {id: row.id})
  ON CREATE SET c.namespace = $staging
WITH c, row, c.namespace = $staging AS staged
CALL (c, row, staged) {
  WITH c, row WHERE staged
  SET c += row.props, c.document_id = row.document_id
  WITH c, row WHERE row.embedding IS NOT NULL
  CALL db.create.setNodeVectorProperty(c, 'embedding', row.embedding)
}
CALL (c, row, staged) {
  WITH c, row WHERE staged AND row.parent_id IS NOT NULL
  MERGE (p:Chunk {id: row.parent_id})
    ON CREATE SET p.namespace = $staging
  MERGE (c)-[:CHILD_OF]->(p)
}
RETURN count(CASE WHEN staged THEN 1 END) AS written, collect(CASE WHEN NOT staged THEN c.id END) AS kept
