// Create or update chunks of documents of one namespace, with HAS_CHUNK and CHILD_OF links.
// Rows may belong to several documents (a folder ingest writes many per transaction); a row
// whose document is not in the namespace is skipped. A chunk id that already belongs to
// another document (or namespace) is returned in `conflicts`: the store then rolls the whole
// transaction back and refuses that document. Embeddings are stored with
// setNodeVectorProperty (float32, half the size of a list of doubles). A parent row may come
// after its children: MERGE on the parent id makes the order irrelevant.
// mode: write
// params:
//   $namespace  STRING     tenant
//   $staging    STRING     prefix of the staging namespaces of this tenant's large documents
//   $rows       LIST<MAP>  [{id, document_id, props: {...}, embedding: LIST<FLOAT>|null, parent_id: STRING|null}]
// returns: written INTEGER, conflicts LIST<MAP>
// browser: :params {namespace: 'demo', staging: '\u001fdemo\u001f', rows: [{id: 'c1', document_id: 'doc_1', props: {content: 'x', chunk_index: 0}, embedding: null, parent_id: null}]}
UNWIND $rows AS row
MATCH (d:Document {id: row.document_id})
WHERE d.namespace = $namespace
MERGE (c:Chunk {id: row.id})
// who held the chunk before this row: nobody (created), this document, or (a conflict)
// another one; a chunk left staged by an interrupted write of this document is taken over
WITH d, c, row,
     c.document_id IS NOT NULL AND NOT (c.document_id = row.document_id
       AND c.namespace IN [$namespace, $staging + row.document_id]) AS conflict,
     CASE WHEN c.namespace = $namespace THEN c.document_id ELSE 'another namespace' END AS owner
SET c += row.props, c.namespace = $namespace, c.document_id = row.document_id
MERGE (d)-[:HAS_CHUNK]->(c)
WITH c, row, conflict, owner
CALL (c, row) {
  WITH c, row WHERE row.embedding IS NOT NULL
  CALL db.create.setNodeVectorProperty(c, 'embedding', row.embedding)
}
CALL (c, row) {
  WITH c, row WHERE row.parent_id IS NOT NULL
  MERGE (p:Chunk {id: row.parent_id})
  MERGE (c)-[:CHILD_OF]->(p)
}
RETURN count(c) AS written,
       collect(CASE WHEN conflict THEN {id: row.id, document_id: row.document_id, owner: owner} END) AS conflicts
