// Full-text (BM25) search over chunks of one namespace with filters. $query must already be
// escaped (kgrag_neo4j.store.lucene.escape_query); when fewer than $top_k of the first $fetch_k
// hits survive the filters, every hit is considered, in the same round trip.
// mode: read
// params:
//   $namespace  STRING   tenant
//   $query      STRING   escaped Lucene query (plain terms, OR semantics)
//   $top_k      INTEGER  results wanted
//   $fetch_k    INTEGER  hits asked of the index first (>= top_k)
//   $filter     MAP      {document_ids, source_prefix, meta_pairs, created_after, created_before}
// returns: chunk MAP, title STRING, document_hash STRING, score FLOAT, exact BOOLEAN
// browser: :params {namespace: 'demo', query: 'graph expansion hops', top_k: 5, fetch_k: 50, filter: {document_ids: null, source_prefix: null, meta_pairs: [], created_after: null, created_before: null}}
// Filters ($filter) in Browser: document_ids (list or null), source_prefix (text or null), meta_pairs
// (['key␟value', ...]: key, U+241F, value; values that are not text as JSON), created_after and
// created_before (epoch seconds or null); `kgrag cypher params chunks/search_keyword --filter meta.KEY=VALUE` writes them.
// The full-text query is plain terms; `kgrag cypher params chunks/search_keyword --query "..."` escapes any text.
CALL db.index.fulltext.queryNodes('chunk_content', $query, {limit: toInteger($fetch_k)}) YIELD node, score
WITH node AS c, score
WHERE c.namespace = $namespace
  AND ($filter.document_ids IS NULL OR c.document_id IN $filter.document_ids)
  AND ($filter.source_prefix IS NULL OR c.source STARTS WITH $filter.source_prefix)
  AND all(p IN $filter.meta_pairs WHERE p IN coalesce(c.meta_pairs, []))
  AND ($filter.created_after IS NULL OR c.created_at > $filter.created_after)
  AND ($filter.created_before IS NULL OR c.created_at < $filter.created_before)
WITH c, score ORDER BY score DESC LIMIT toInteger($top_k)
WITH collect({c: c, score: score}) AS hits
CALL (hits) {
  // guarded by an empty UNWIND, not WITH ... WHERE, as in search_vector (where the WITH guard
  // let the planner run the fallback's scan on every call)
  UNWIND CASE WHEN size(hits) >= $top_k THEN hits ELSE [] END AS h
  RETURN h.c AS c, h.score AS score, false AS exact
  UNION
  UNWIND CASE WHEN size(hits) < $top_k THEN [1] ELSE [] END AS fallback
  CALL db.index.fulltext.queryNodes('chunk_content', $query) YIELD node, score
  WITH node AS c, score
  WHERE c.namespace = $namespace
    AND ($filter.document_ids IS NULL OR c.document_id IN $filter.document_ids)
    AND ($filter.source_prefix IS NULL OR c.source STARTS WITH $filter.source_prefix)
    AND all(p IN $filter.meta_pairs WHERE p IN coalesce(c.meta_pairs, []))
    AND ($filter.created_after IS NULL OR c.created_at > $filter.created_after)
    AND ($filter.created_before IS NULL OR c.created_at < $filter.created_before)
  WITH c, score ORDER BY score DESC LIMIT toInteger($top_k)
  RETURN c, score, true AS exact
}
OPTIONAL MATCH (d:Document)-[:HAS_CHUNK]->(c)
RETURN c {.id, .document_id, .content, .chunk_index, .parent_id, .token_count, .metadata,
          .source, .created_at, .document_hash, .document_title} AS chunk,
       d.title AS title, d.content_hash AS document_hash, score, exact
ORDER BY score DESC, chunk.id
