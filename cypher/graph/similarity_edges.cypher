// similar_to edges that need no LLM: for each given chunk, its nearest embedded chunks of the
// namespace (vector index) whose cosine is at least $threshold, at most $top_k per chunk,
// weight = cosine. Optionally only across documents.
// mode: write
// params:
//   $namespace        STRING        tenant
//   $ids              LIST<STRING>  chunks to link from
//   $top_k            INTEGER       neighbours per chunk
//   $fetch_k          INTEGER       candidates asked of the vector index per chunk
//   $threshold        FLOAT         minimum cosine in [-1, 1]
//   $cross_document   BOOLEAN       only link chunks of different documents
// returns: stored INTEGER
// browser: :params {namespace: 'demo', ids: ['chk_...'], top_k: 3, fetch_k: 20, threshold: 0.75, cross_document: false}
// Chunk ids: chunks/list_document_chunks lists a document's.
UNWIND $ids AS id
MATCH (s:Chunk {id: id})
WHERE s.namespace = $namespace AND s.embedding IS NOT NULL
CALL (s) {
  CALL db.index.vector.queryNodes('chunk_embedding', toInteger($fetch_k), s.embedding) YIELD node, score
  WITH node AS t, score WHERE t <> s AND t.namespace = $namespace
  RETURN collect({t: t, cosine: 2 * score - 1}) AS hits
}
// when other namespaces crowd the index's answer (fewer than $top_k of ours among $fetch_k),
// the namespace is a small share of the index: an exact scan over it is cheap and complete
CALL (s, hits) {
  UNWIND CASE WHEN size(hits) >= $top_k THEN hits ELSE [] END AS h
  RETURN h.t AS t, h.cosine AS cosine
  UNION
  UNWIND CASE WHEN size(hits) < $top_k THEN [1] ELSE [] END AS exact
  MATCH (t:Chunk {namespace: $namespace})
  WHERE t <> s AND t.embedding IS NOT NULL
  RETURN t, 2 * vector.similarity.cosine(s.embedding, t.embedding) - 1 AS cosine
}
WITH s, t, cosine
WHERE cosine >= $threshold AND (NOT $cross_document OR t.document_id <> s.document_id)
WITH s, t, cosine ORDER BY cosine DESC, t.id
WITH s, collect({t: t, cosine: cosine})[..toInteger($top_k)] AS best
UNWIND best AS b
WITH s, b.t AS t, b.cosine AS cosine
WITH s, t, CASE WHEN cosine > 1.0 THEN 1.0 ELSE cosine END AS weight
MERGE (s)-[r:RELATES_TO {relation: 'similar_to'}]->(t)
ON CREATE SET r.id = 'sim_' + s.id + '_' + t.id, r.weight = weight, r.origin = 'similarity',
              r.description = 'cosine similarity ' + toString(round(weight, 3)), r.namespace = $namespace
ON MATCH SET r.weight = CASE WHEN weight > r.weight THEN weight ELSE r.weight END
RETURN count(r) AS stored
