// The leaf chunks of some documents, in order, with their text, whether they were scanned
// for names, the links they hold now (co-occurrences and mentions: a document linked again
// rewrites only the chunks whose links change; their share of the document's link context,
// `link_forms`; `relink`: marked to be linked again; `moved`: a new version of the document kept
// the chunk at another time or index since it was linked), and the name their document's
// title stands for (parents of parent-child chunking are left out: they repeat their
// children's text).
// `links_version` counts the document's link writes: a write checks it did not move since.
// mode: read
// params:
//   $namespace     STRING        tenant
//   $document_ids  LIST<STRING>  documents
// returns: document_id STRING, title STRING, content_hash STRING, links_version INTEGER, chunks LIST<MAP>
// browser: :params {namespace: 'demo', document_ids: ['doc_44baee2d8286fcbe2de5746f8d66be0f']}
UNWIND $document_ids AS id
MATCH (d:Document {id: id})
WHERE d.namespace = $namespace
CALL (d) {
  MATCH (d)-[:HAS_CHUNK]->(c:Chunk)
  WHERE c.namespace = $namespace AND NOT EXISTS { (:Chunk)-[:CHILD_OF]->(c) }
  WITH c ORDER BY c.chunk_index, c.id
  RETURN collect(c {.id, .content, .created_at, .chunk_index, scanned: c.name_keys IS NOT NULL, .pair_a, .pair_b, .pair_strength, .pair_windows,
                    .link_forms, .link_counts, .links_written, relink: c.relink IS NOT NULL,
                    moved: c.linked_at IS NOT NULL AND c.linked_at <> [c.created_at, c.chunk_index],
                    mentions: [(c)-[m:MENTIONS]->(e:Entity) | [e.id, m.count, m.first]]}) AS chunks
}
RETURN d.id AS document_id, coalesce(d.title, '') AS title, d.content_hash AS content_hash,
       coalesce(d.links_version, 0) AS links_version, chunks
ORDER BY document_id
