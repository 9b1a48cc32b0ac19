// Create or update chunks of documents of one namespace, with HAS_CHUNK and CHILD_OF links.
// Rows may belong to several documents (a folder ingest writes many per transaction); a row
// whose document is not in the namespace is skipped. A chunk id that already belongs to
// another document (or namespace) is left untouched and returned in `conflicts`: the store
// then rolls the whole transaction back and refuses that document, and a hand run
// (`kgrag cypher run`) with another tenant's ids changes nothing of it. A chunk left staged by
// an interrupted write of the same document (in the document's staging namespace, named from
// $namespace) is taken over. Embeddings are stored with setNodeVectorProperty (float32, half
// the size of a list of doubles). A parent row may come after its children: MERGE on the
// parent id makes the order irrelevant.
// mode: write
// params:
//   $namespace  STRING     tenant
//   $rows       LIST<MAP>  [{id, document_id, props: {...}, embedding: LIST<FLOAT>|null, parent_id: STRING|null}]
//   $vector_property  STRING  property holding the namespace's vectors (its embedding model's; `kgrag cypher params` fills it)
// returns: written INTEGER, conflicts LIST<MAP>
// browser: :params {namespace: 'demo', rows: [{id: 'c1', document_id: 'doc_1', props: {content: 'x', chunk_index: 0}, embedding: null, parent_id: null}], vector_property: 'embedding'}
UNWIND $rows AS row
MATCH (d:Document {id: row.document_id})
WHERE d.namespace = $namespace
MERGE (c:Chunk {id: row.id})
  ON CREATE SET c.namespace = $namespace, c.document_id = row.document_id
// who held the chunk before this row: nobody (created), this document, or (a conflict)
// another one; the document's staging namespace counts as this document
WITH d, c, row, [$namespace, '\u001f' + $namespace + '\u001f' + row.document_id] AS ours
WITH d, c, row, ours,
     NOT (coalesce(c.document_id, row.document_id) = row.document_id AND coalesce(c.namespace, $namespace) IN ours) AS conflict,
     CASE WHEN c.namespace = $namespace THEN c.document_id ELSE 'another namespace' END AS owner
CALL (d, c, row, ours, conflict) {
  WITH d, c, row, ours WHERE NOT conflict
  SET c += row.props, c.namespace = $namespace, c.document_id = row.document_id
  MERGE (d)-[:HAS_CHUNK]->(c)
  WITH c, row, ours
  CALL (c, row) {
    WITH c, row WHERE row.embedding IS NOT NULL
    CALL db.create.setNodeVectorProperty(c, $vector_property, row.embedding)
  }
  CALL (c, row, ours) {
    WITH c, row, ours WHERE row.parent_id IS NOT NULL
    MERGE (p:Chunk {id: row.parent_id})
      ON CREATE SET p.namespace = $namespace, p.document_id = row.document_id
    WITH c, p, row, ours WHERE p.namespace IN ours AND p.document_id = row.document_id
    MERGE (c)-[:CHILD_OF]->(p)
  }
}
RETURN count(CASE WHEN NOT conflict THEN 1 END) AS written,
       collect(CASE WHEN conflict THEN {id: row.id, document_id: row.document_id, owner: owner} END) AS conflicts
