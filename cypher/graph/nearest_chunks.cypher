// The nearest stored chunks of the namespace to each row, by the vector index: at most
// $top_k per row with cosine >= $threshold (and above 0), the row's own chunk excluded (optionally its
// whole document too). A row gives its vector, or names a stored chunk whose embedding is
// used. A read: similar_to edges are chosen from it and written with graph/store_edges (a
// vector-index call inside a write transaction ran about 10x slower than in a read).
// mode: read
// params:
//   $namespace       STRING     tenant
//   $rows            LIST<MAP>  [{id, embedding: LIST<FLOAT>|null, document_id: STRING|null}]
//   $top_k           INTEGER    neighbours per row
//   $fetch_k         INTEGER    candidates asked of the vector index per row
//   $threshold       FLOAT      minimum cosine in [-1, 1]
//   $cross_document  BOOLEAN    only chunks of other documents than the row's
//   $vector_property  STRING  property holding the namespace's vectors (its embedding model's; `kgrag cypher params` fills it)
//   $chunk_index  STRING  the chunk vector index of the namespace's embedding model
// returns: id STRING, hits LIST<MAP>
// browser: :params {namespace: 'demo', rows: [{id: 'chk_...', embedding: null, document_id: null}], top_k: 5, fetch_k: 40, threshold: 0.75, cross_document: false, vector_property: 'embedding', chunk_index: 'chunk_embedding'}
// Chunk ids: chunks/list_document_chunks lists a document's.
UNWIND $rows AS row
OPTIONAL MATCH (s:Chunk {id: row.id})
WHERE s.namespace = $namespace
WITH row, coalesce(row.embedding, s[$vector_property]) AS v, coalesce(row.document_id, s.document_id) AS document_id
WHERE v IS NOT NULL
CALL (row, v, document_id) {
  CALL db.index.vector.queryNodes($chunk_index, toInteger($fetch_k), v) YIELD node, score
  WITH node AS t, score
  WHERE t.namespace = $namespace AND t.id <> row.id AND (NOT $cross_document OR t.document_id <> document_id)
  RETURN collect({t: t, cosine: 2 * score - 1}) AS hits
}
// when other namespaces (or, across documents only, the row's own document) crowd the index's
// answer (fewer than $top_k candidates among $fetch_k), an exact scan over the namespace answers
CALL (row, v, hits) {
  UNWIND CASE WHEN size(hits) >= $top_k THEN hits ELSE [] END AS h
  RETURN h.t AS t, h.cosine AS cosine
  UNION
  UNWIND CASE WHEN size(hits) < $top_k THEN [1] ELSE [] END AS exact
  MATCH (t:Chunk {namespace: $namespace})
  WHERE t.id <> row.id AND t[$vector_property] IS NOT NULL
  RETURN t, 2 * vector.similarity.cosine(v, t[$vector_property]) - 1 AS cosine
}
WITH row, document_id, t, cosine
WHERE cosine >= $threshold AND cosine > 0 AND (NOT $cross_document OR t.document_id <> document_id)
WITH row, t, cosine ORDER BY cosine DESC, t.id
WITH row, collect({id: t.id, cosine: cosine, document_id: t.document_id})[..toInteger($top_k)] AS hits
RETURN row.id AS id, hits
