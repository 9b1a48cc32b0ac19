// The chunks that mention an entity the query names: the namespace's entities whose name key
// is one of $keys (the query's word runs, normalised like entity names; of overlapping ones
// found only the longest) and that at most
// $max_chunks chunks mention; for each chunk that mentions any of them (and passes the
// filters), sum(1 / df) over those entities, and their names. The entity seeding of graph
// retrieval's per-hop path (the one-statement path does the same inside graph/retrieve).
// mode: read
// params:
//   $namespace   STRING        tenant
//   $keys        LIST<MAP>     word runs of the query: [{key, start, end}]
//   $max_chunks  INTEGER       entities mentioned by more chunks than this are skipped
//   $filter      MAP           {document_ids, source_prefix, meta_pairs, created_after, created_before}
//   $vector_property  STRING  property holding the namespace's vectors (its embedding model's; `kgrag cypher params` fills it)
// returns: chunk_id STRING, entity_score FLOAT, names LIST<STRING>
// browser: :params {namespace: 'demo', keys: [{key: 'neo4j', start: 0, end: 1}], max_chunks: 10, filter: {document_ids: null, source_prefix: null, meta_pairs: [], created_after: null, created_before: null}, vector_property: 'embedding'}
// Filters ($filter) in Browser: document_ids (list or null), source_prefix (text or null), meta_pairs
// (['key␟value', ...]: key, U+241F, value; values that are not text as JSON), created_after and
// created_before (epoch seconds or null); `kgrag cypher params entities/query_entity_chunks --filter meta.KEY=VALUE` writes them.
UNWIND $keys AS k
MATCH (e:Entity {namespace: $namespace, name_key: k.key})
WITH collect({e: e, s: k.start, t: k.end}) AS found
// like the gazetteer: of overlapping names found in the query, only the longest
UNWIND [f IN found WHERE none(g IN found WHERE g.s <= f.s AND f.t <= g.t AND g.t - g.s > f.t - f.s)] AS f
WITH DISTINCT f.e AS e
WITH e, COUNT { (e)<-[:MENTIONS]-() } AS df
WHERE 0 < df <= $max_chunks
MATCH (c:Chunk)-[:MENTIONS]->(e)
WHERE c.namespace = $namespace AND c[$vector_property] IS NOT NULL
  AND ($filter.document_ids IS NULL OR c.document_id IN $filter.document_ids)
  AND ($filter.source_prefix IS NULL OR c.source STARTS WITH $filter.source_prefix)
  AND all(p IN $filter.meta_pairs WHERE p IN coalesce(c.meta_pairs, []))
  AND ($filter.created_after IS NULL OR c.created_at > $filter.created_after)
  AND ($filter.created_before IS NULL OR c.created_at < $filter.created_before)
RETURN c.id AS chunk_id, sum(1.0 / df) AS entity_score, collect(DISTINCT e.name) AS names
ORDER BY chunk_id
