// Candidate pairs for cross-document edge extraction: for each chunk of the scoped documents,
// up to $max_pairs chunks of OTHER documents with cosine >= $threshold. When other namespaces
// crowd the vector index's answer (fewer than $max_pairs candidates of ours among $fetch_k),
// an exact scan over the namespace finds them instead: a shared server loses no candidate.
// mode: read
// params:
//   $namespace     STRING        tenant
//   $document_ids  LIST<STRING>  documents to take source chunks from (null = all)
//   $max_pairs     INTEGER       candidates per chunk
//   $fetch_k       INTEGER       candidates asked of the vector index per chunk
//   $threshold     FLOAT         minimum cosine in [-1, 1]
// returns: source_id STRING, source_document STRING, source_content STRING, target_id STRING, target_document STRING, target_content STRING, cosine FLOAT
// browser: :params {namespace: 'demo', document_ids: ['doc_44baee2d8286fcbe2de5746f8d66be0f'], max_pairs: 3, fetch_k: 20, threshold: 0.5}
MATCH (s:Chunk {namespace: $namespace})
WHERE s.embedding IS NOT NULL AND ($document_ids IS NULL OR s.document_id IN $document_ids)
CALL (s) {
  CALL db.index.vector.queryNodes('chunk_embedding', toInteger($fetch_k), s.embedding) YIELD node, score
  WITH node AS t, 2 * score - 1 AS cosine
  WHERE t.namespace = $namespace AND t.document_id <> s.document_id
  RETURN collect({t: t, cosine: cosine}) AS hits
}
CALL (s, hits) {
  UNWIND CASE WHEN size(hits) >= $max_pairs THEN hits ELSE [] END AS h
  RETURN h.t AS t, h.cosine AS cosine
  UNION
  UNWIND CASE WHEN size(hits) < $max_pairs THEN [1] ELSE [] END AS exact
  MATCH (t:Chunk {namespace: $namespace})
  WHERE t.embedding IS NOT NULL AND t.document_id <> s.document_id
  RETURN t, 2 * vector.similarity.cosine(s.embedding, t.embedding) - 1 AS cosine
}
WITH s, t, cosine WHERE cosine >= $threshold
WITH s, t, cosine ORDER BY cosine DESC, t.id
WITH s, collect({t: t, cosine: cosine})[..toInteger($max_pairs)] AS best
UNWIND best AS b
WITH s, b.t AS t, b.cosine AS cosine
RETURN s.id AS source_id, s.document_id AS source_document, s.content AS source_content,
       t.id AS target_id, t.document_id AS target_document, t.content AS target_content, cosine
ORDER BY source_id, cosine DESC
