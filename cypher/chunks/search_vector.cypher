// Vector search over chunks of one namespace with filters, without losing recall to them:
// the index is asked for $fetch_k candidates; when fewer than $top_k survive the namespace and
// filters, an exact cosine scan over the filtered chunks answers instead, in the same round trip.
// Scores are Neo4j's normalised cosine, (1 + cos) / 2, in [0, 1]. Ties are cut by chunk id
// before the limit, so what else the index holds never decides which of equal chunks is kept.
// mode: read
// params:
//   $namespace  STRING       tenant
//   $embedding  LIST<FLOAT>  query vector (length = index dimensions)
//   $top_k      INTEGER      results wanted
//   $fetch_k    INTEGER      candidates asked of the vector index (>= top_k)
//   $filter     MAP          {document_ids, source_prefix, meta_pairs, created_after, created_before}
//   $vector_property  STRING  property holding the namespace's vectors (its embedding model's; `kgrag cypher params` fills it)
//   $chunk_index  STRING  the chunk vector index of the namespace's embedding model
// returns: chunk MAP, title STRING, document_hash STRING, score FLOAT, exact BOOLEAN
// browser: :params {namespace: 'demo', embedding: [], top_k: 5, fetch_k: 50, filter: {document_ids: null, source_prefix: null, meta_pairs: [], created_after: null, created_before: null}, vector_property: 'embedding', chunk_index: 'chunk_embedding'}
// In Browser the query vector comes from the namespace's embedder: `kgrag cypher params chunks/search_vector --namespace demo --query "..."` prints this line with it.
// Filters ($filter) in Browser: document_ids (list or null), source_prefix (text or null), meta_pairs
// (['key␟value', ...]: key, U+241F, value; values that are not text as JSON), created_after and
// created_before (epoch seconds or null); `kgrag cypher params chunks/search_vector --filter meta.KEY=VALUE` writes them.
CALL db.index.vector.queryNodes($chunk_index, toInteger($fetch_k), $embedding) YIELD node, score
WITH node AS c, score
WHERE c.namespace = $namespace
  AND ($filter.document_ids IS NULL OR c.document_id IN $filter.document_ids)
  AND ($filter.source_prefix IS NULL OR c.source STARTS WITH $filter.source_prefix)
  AND all(p IN $filter.meta_pairs WHERE p IN coalesce(c.meta_pairs, []))
  AND ($filter.created_after IS NULL OR c.created_at > $filter.created_after)
  AND ($filter.created_before IS NULL OR c.created_at < $filter.created_before)
WITH c, score ORDER BY score DESC, c.id LIMIT toInteger($top_k)
WITH collect({c: c, score: score}) AS hits
CALL (hits) {
  // a WITH ... WHERE guard here does not stop the planner from running the fallback's scan
  // on every call (PROFILE: 10,001 db hits on 10k chunks); an empty UNWIND does
  UNWIND CASE WHEN size(hits) >= $top_k THEN hits ELSE [] END AS h
  RETURN h.c AS c, h.score AS score, false AS exact
  UNION
  UNWIND CASE WHEN size(hits) < $top_k THEN [1] ELSE [] END AS fallback
  MATCH (c:Chunk {namespace: $namespace})
  WHERE c[$vector_property] IS NOT NULL
    AND ($filter.document_ids IS NULL OR c.document_id IN $filter.document_ids)
    AND ($filter.source_prefix IS NULL OR c.source STARTS WITH $filter.source_prefix)
    AND all(p IN $filter.meta_pairs WHERE p IN coalesce(c.meta_pairs, []))
    AND ($filter.created_after IS NULL OR c.created_at > $filter.created_after)
    AND ($filter.created_before IS NULL OR c.created_at < $filter.created_before)
  WITH c, vector.similarity.cosine(c[$vector_property], $embedding) AS score
  ORDER BY score DESC, c.id LIMIT toInteger($top_k)
  RETURN c, score, true AS exact
}
OPTIONAL MATCH (d:Document)-[:HAS_CHUNK]->(c)
RETURN c {.id, .document_id, .content, .chunk_index, .parent_id, .token_count, .metadata,
          .source, .created_at, .document_hash, .document_title} AS chunk,
       d.title AS title, d.content_hash AS document_hash, score, exact
ORDER BY score DESC, chunk.id
