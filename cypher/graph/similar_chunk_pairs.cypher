// Candidate pairs for cross-document edge extraction: for each chunk of the scoped documents,
// up to $max_pairs chunks of OTHER documents of the namespace with cosine >= $threshold, the
// nearest first, never lost to other namespaces (exact scan when they crowd the index).
// mode: read
// params:
//   $namespace     STRING        tenant
//   $document_ids  LIST<STRING>  documents to take source chunks from (null = all)
//   $max_pairs     INTEGER       candidates per chunk
//   $fetch_k       INTEGER       candidates asked of the vector index per chunk
//   $threshold     FLOAT         minimum cosine in [-1, 1]
//   $vector_property  STRING  property holding the namespace's vectors (its embedding model's; `kgrag cypher params` fills it)
//   $chunk_index  STRING  the chunk vector index of the namespace's embedding model
// returns: source_id STRING, source_document STRING, source_content STRING, target_id STRING, target_document STRING, target_content STRING, cosine FLOAT
// browser: :params {namespace: 'demo', document_ids: ['doc_44baee2d8286fcbe2de5746f8d66be0f'], max_pairs: 3, fetch_k: 20, threshold: 0.5, vector_property: 'embedding', chunk_index: 'chunk_embedding'}
MATCH (s:Chunk {namespace: $namespace})
WHERE s[$vector_property] IS NOT NULL AND ($document_ids IS NULL OR s.document_id IN $document_ids)
CALL (s) {
  CALL db.index.vector.queryNodes($chunk_index, toInteger($fetch_k), s[$vector_property]) YIELD node, score
  WITH collect({t: node, cosine: 2 * score - 1}) AS raw
  RETURN raw, [h IN raw WHERE h.t.namespace = $namespace AND h.t.document_id <> s.document_id
                              AND h.cosine >= $threshold] AS hits
}
// namespace-exact: the index's $fetch_k nearest are enough when $max_pairs of them qualify, when
// the index had no more, or when the farthest of them is already below $threshold; otherwise
// (other namespaces or this document crowd the answer) an exact scan over the namespace answers
CALL (s, raw, hits) {
  UNWIND CASE WHEN size(hits) >= $max_pairs OR size(raw) < $fetch_k OR raw[-1].cosine < $threshold
              THEN hits ELSE [] END AS h
  RETURN h.t AS t, h.cosine AS cosine
  UNION
  UNWIND CASE WHEN size(hits) < $max_pairs AND size(raw) >= $fetch_k AND raw[-1].cosine >= $threshold
              THEN [1] ELSE [] END AS exact
  MATCH (t:Chunk {namespace: $namespace})
  WHERE t[$vector_property] IS NOT NULL AND t.document_id <> s.document_id
  WITH t, 2 * vector.similarity.cosine(s[$vector_property], t[$vector_property]) - 1 AS cosine
  WHERE cosine >= $threshold
  RETURN t, cosine
}
WITH s, t, cosine ORDER BY cosine DESC, t.id
WITH s, collect({t: t, cosine: cosine})[..toInteger($max_pairs)] AS best
UNWIND best AS b
WITH s, b.t AS t, b.cosine AS cosine
RETURN s.id AS source_id, s.document_id AS source_document, s.content AS source_content,
       t.id AS target_id, t.document_id AS target_document, t.content AS target_content, cosine
ORDER BY source_id, cosine DESC
