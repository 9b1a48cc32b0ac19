// The chunks of documents, not marked to be linked again, that write one of some forms: when
// linking some chunks again changes how a document's names count or resolve (a one-word name
// now mostly in lower case there, a short form whose longer name came or went), the other
// chunks that write those names are linked again too. Their text, the links they hold now
// and their share of the forms, in order.
// mode: read
// params:
//   $namespace  STRING     tenant
//   $documents  LIST<MAP>  [{id, forms: LIST<STRING>}]
// returns: document_id STRING, chunks LIST<MAP>
// browser: :params {namespace: 'demo', documents: [{id: 'doc_44baee2d8286fcbe2de5746f8d66be0f', forms: ['robert']}]}
UNWIND $documents AS row
MATCH (d:Document {id: row.id})
WHERE d.namespace = $namespace
CALL (d, row) {
  MATCH (d)-[:HAS_CHUNK]->(c:Chunk)
  WHERE c.namespace = $namespace AND c.relink IS NULL AND c.pair_a IS NOT NULL
    AND any(f IN coalesce(c.link_forms, []) WHERE f IN row.forms)
  WITH c ORDER BY c.chunk_index, c.id
  RETURN collect(c {.id, .content, .created_at, .chunk_index, .pair_a, .pair_b, .pair_strength, .pair_windows, .link_forms, .link_counts, .links_written,
                    mentions: [(c)-[m:MENTIONS]->(e:Entity) | [e.id, m.count, m.first]]}) AS chunks
}
RETURN d.id AS document_id, chunks
ORDER BY document_id
