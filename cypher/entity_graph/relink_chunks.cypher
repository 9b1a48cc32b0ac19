// Documents some of whose chunks are marked to be linked again (`relink`), with what linking
// those chunks alone needs: the forms the document's chunks write (its link context, kept by
// entity_graph/write_links), its first leaf chunk (the one its title's name goes to), and
// the first $limit marked chunks, in order (the others wait for the next transaction), with their text, the links they hold now and their share of
// the forms. `pending`: the document is to be linked again as a whole anyway. Parents of
// parent-child chunking are never linked and never marked.
// mode: read
// params:
//   $namespace     STRING        tenant
//   $document_ids  LIST<STRING>  documents
//   $limit         INTEGER       most marked chunks of a document
// returns: document_id STRING, title STRING, content_hash STRING, links_version INTEGER, pending BOOLEAN, link_forms LIST<STRING>, link_counts LIST<INTEGER>, first_chunk STRING, chunks LIST<MAP>
// browser: :params {namespace: 'demo', document_ids: ['doc_44baee2d8286fcbe2de5746f8d66be0f'], limit: 1000}
UNWIND $document_ids AS id
MATCH (d:Document {id: id})
WHERE d.namespace = $namespace
CALL (d) {
  MATCH (d)-[:HAS_CHUNK]->(c:Chunk)
  WHERE c.relink AND c.namespace = $namespace
  WITH c ORDER BY c.chunk_index, c.id
  LIMIT toInteger($limit)
  RETURN collect(c {.id, .content, .created_at, .chunk_index, .pair_a, .pair_b, .pair_strength, .pair_windows, .link_forms, .link_counts, .links_written,
                    mentions: [(c)-[m:MENTIONS]->(e:Entity) | [e.id, m.count, m.first]]}) AS chunks
}
CALL (d) {
  MATCH (d)-[:HAS_CHUNK]->(c:Chunk)
  WHERE c.namespace = $namespace AND NOT EXISTS { (:Chunk)-[:CHILD_OF]->(c) }
  RETURN c.id AS first_chunk
  ORDER BY c.chunk_index, c.id
  LIMIT 1
}
RETURN d.id AS document_id, coalesce(d.title, '') AS title, d.content_hash AS content_hash,
       coalesce(d.links_version, 0) AS links_version,
       d.entities_hash IS NULL OR d.entities_hash <> d.content_hash AS pending,
       d.link_forms AS link_forms, d.link_counts AS link_counts, first_chunk, chunks
ORDER BY document_id
