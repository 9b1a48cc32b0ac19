// The neighbourhood a personalized PageRank runs on, in one round trip: the seed chunks (vector
// search, filtered, exact scan when the index answers too few), the entities the query names
// (by exact name key) or resembles (entity vector search, normalised cosine >= $entity_floor;
// an exact scan over the namespace when other namespaces crowd the index),
// the entities the seeds mention, the chunks mentioning any of those entities (an entity
// mentioned by more than $max_entity_chunks chunks is kept as a node but not expanded), and the
// chunk edges out of the seeds. Returned as lists: the arithmetic happens in the client.
// Every chunk and entity carries what the walk needs to leave it correctly even though the
// neighbourhood is cut: an entity its mention count df, a chunk its weighted degree
// sum(1 / df) over every entity it mentions (mentions weigh 1 / df both ways).
// mode: read
// params:
//   $namespace          STRING        tenant
//   $embedding          LIST<FLOAT>   query vector
//   $seed_top_k         INTEGER       seed chunks
//   $fetch_k            INTEGER       candidates asked of the vector index before filtering
//   $filter             MAP           {document_ids, source_prefix, meta_pairs, created_after, created_before}
//   $entity_keys        LIST<MAP>     word runs of the query: [{key, start, end}] (entities named in it)
//   $entity_vector_k    INTEGER       entities taken from the entity vector index (0 = none)
//   $entity_floor       FLOAT         least normalised cosine of an entity taken by vector
//   $max_entity_chunks  INTEGER       an entity mentioned by more chunks is not expanded
//   $chunk_edges        BOOLEAN       also read RELATES_TO edges out of the seeds
//   $vector_property  STRING  property holding the namespace's vectors (its embedding model's; `kgrag cypher params` fills it)
//   $chunk_index  STRING  the chunk vector index of the namespace's embedding model
//   $entity_index  STRING  the entity vector index of the namespace's embedding model
// returns: seeds LIST<MAP>, query_entities LIST<MAP>, entities LIST<MAP>, chunks LIST<MAP>, mentions LIST<MAP>, chunk_edges LIST<MAP>, relations LIST<MAP>
// browser: :params {namespace: 'demo', embedding: [], seed_top_k: 10, fetch_k: 100, filter: {document_ids: null, source_prefix: null, meta_pairs: [], created_after: null, created_before: null}, entity_keys: [{key: 'neo4j', start: 0, end: 1}], entity_vector_k: 3, entity_floor: 0.8, max_entity_chunks: 25, chunk_edges: true, vector_property: 'embedding', chunk_index: 'chunk_embedding', entity_index: 'entity_embedding'}
// In Browser the query vector comes from the namespace's embedder: `kgrag cypher params graph/ppr_neighbourhood --namespace demo --query "..."` prints this line with it.
// Filters ($filter) in Browser: document_ids (list or null), source_prefix (text or null), meta_pairs
// (['key␟value', ...]: key, U+241F, value; values that are not text as JSON), created_after and
// created_before (epoch seconds or null); `kgrag cypher params graph/ppr_neighbourhood --filter meta.KEY=VALUE` writes them.
CALL db.index.vector.queryNodes($chunk_index, toInteger($fetch_k), $embedding) YIELD node, score
WITH node AS c, score
WHERE c.namespace = $namespace
  AND ($filter.document_ids IS NULL OR c.document_id IN $filter.document_ids)
  AND ($filter.source_prefix IS NULL OR c.source STARTS WITH $filter.source_prefix)
  AND all(p IN $filter.meta_pairs WHERE p IN coalesce(c.meta_pairs, []))
  AND ($filter.created_after IS NULL OR c.created_at > $filter.created_after)
  AND ($filter.created_before IS NULL OR c.created_at < $filter.created_before)
WITH c, score ORDER BY score DESC, c.id LIMIT toInteger($seed_top_k)
WITH collect({c: c, score: score}) AS vhits
CALL (vhits) {
  UNWIND CASE WHEN size(vhits) >= $seed_top_k THEN vhits ELSE [] END AS h
  RETURN h.c AS c, h.score AS score
  UNION
  UNWIND CASE WHEN size(vhits) < $seed_top_k THEN [1] ELSE [] END AS exact
  MATCH (c:Chunk {namespace: $namespace})
  WHERE c[$vector_property] IS NOT NULL
    AND ($filter.document_ids IS NULL OR c.document_id IN $filter.document_ids)
    AND ($filter.source_prefix IS NULL OR c.source STARTS WITH $filter.source_prefix)
    AND all(p IN $filter.meta_pairs WHERE p IN coalesce(c.meta_pairs, []))
    AND ($filter.created_after IS NULL OR c.created_at > $filter.created_after)
    AND ($filter.created_before IS NULL OR c.created_at < $filter.created_before)
  WITH c, vector.similarity.cosine(c[$vector_property], $embedding) AS score
  ORDER BY score DESC, c.id LIMIT toInteger($seed_top_k)
  RETURN c, score
}
WITH c, score ORDER BY score DESC, c.id
WITH collect({c: c, score: score}) AS seeds
// entities the query names, then entities it resembles
CALL () {
  UNWIND $entity_keys AS k
  MATCH (e:Entity {namespace: $namespace, name_key: k.key})
  WITH collect({e: e, s: k.start, t: k.end}) AS found
  // like the gazetteer: of overlapping names found in the query, only the longest
  RETURN [f IN found WHERE none(g IN found WHERE g.s <= f.s AND f.t <= g.t AND g.t - g.s > f.t - f.s) | f.e] AS named_all
}
CALL (named_all) {
  UNWIND named_all AS e
  RETURN collect(DISTINCT e) AS named
}
// namespace-exact: when other namespaces crowd the index's answer, an exact scan over this
// namespace's entities finds the nearest instead
CALL () {
  UNWIND CASE WHEN $entity_vector_k > 0 THEN [1] ELSE [] END AS on
  CALL db.index.vector.queryNodes($entity_index, toInteger($entity_vector_k * 10), $embedding) YIELD node, score
  WITH node AS e, score
  WHERE e.namespace = $namespace
  WITH e, score ORDER BY score DESC, e.id LIMIT toInteger($entity_vector_k)
  RETURN collect({e: e, score: score}) AS ehits
}
CALL (ehits) {
  CALL (ehits) {
    UNWIND CASE WHEN size(ehits) >= $entity_vector_k THEN ehits ELSE [] END AS h
    RETURN h.e AS e, h.score AS score
    UNION
    UNWIND CASE WHEN size(ehits) < $entity_vector_k THEN [1] ELSE [] END AS exact
    MATCH (e:Entity)
    USING INDEX e:Entity(namespace, name_key)
    WHERE e.namespace = $namespace AND e.name_key IS NOT NULL AND e[$vector_property] IS NOT NULL
    WITH e, vector.similarity.cosine(e[$vector_property], $embedding) AS score
    ORDER BY score DESC, e.id LIMIT toInteger($entity_vector_k)
    RETURN e, score
  }
  WITH e, score WHERE score >= $entity_floor
  WITH e, score ORDER BY score DESC, e.id
  RETURN collect({e: e, score: score}) AS resembled
}
WITH seeds, [n IN named | {e: n, score: 1.0, how: 'named'}]
          + [r IN resembled WHERE NOT r.e IN named | {e: r.e, score: r.score, how: 'resembles'}] AS qents
WITH seeds, qents, [s IN seeds | s.c] AS seed_nodes, [q IN qents | q.e] AS qnodes
// the entities of the neighbourhood: the query's and the seeds'
CALL (seed_nodes, qnodes) {
  UNWIND seed_nodes AS s
  MATCH (s)-[:MENTIONS]->(e:Entity)
  WHERE e.namespace = $namespace
  RETURN collect(DISTINCT e) AS seed_entities
}
WITH seeds, qents, seed_nodes, qnodes, qnodes + [e IN seed_entities WHERE NOT e IN qnodes] AS ents
CALL (ents) {
  UNWIND ents AS e
  RETURN collect({e: e, df: COUNT { (e)<-[:MENTIONS]-() }}) AS ent_rows
}
// the chunks of those entities (rare entities only), and the chunk edges out of the seeds
CALL (ent_rows, seed_nodes) {
  UNWIND [x IN ent_rows WHERE x.df <= $max_entity_chunks | x.e] AS e
  MATCH (e)<-[:MENTIONS]-(c:Chunk)
  WHERE c.namespace = $namespace
    AND ($filter.document_ids IS NULL OR c.document_id IN $filter.document_ids)
    AND ($filter.source_prefix IS NULL OR c.source STARTS WITH $filter.source_prefix)
    AND all(p IN $filter.meta_pairs WHERE p IN coalesce(c.meta_pairs, []))
    AND ($filter.created_after IS NULL OR c.created_at > $filter.created_after)
    AND ($filter.created_before IS NULL OR c.created_at < $filter.created_before)
  RETURN collect(DISTINCT c) AS entity_chunks
}
CALL (seed_nodes) {
  UNWIND CASE WHEN $chunk_edges THEN seed_nodes ELSE [] END AS s
  MATCH (s)-[r:RELATES_TO]-(n)
  WHERE n.namespace = $namespace
    AND ($filter.document_ids IS NULL OR n.document_id IN $filter.document_ids)
    AND ($filter.source_prefix IS NULL OR n.source STARTS WITH $filter.source_prefix)
    AND all(p IN $filter.meta_pairs WHERE p IN coalesce(n.meta_pairs, []))
    AND ($filter.created_after IS NULL OR n.created_at > $filter.created_after)
    AND ($filter.created_before IS NULL OR n.created_at < $filter.created_before)
  RETURN collect(DISTINCT n) AS edge_chunks
}
WITH seeds, qents, ent_rows, ents, seed_nodes + entity_chunks + edge_chunks AS reached
CALL (reached) {
  UNWIND reached AS c
  RETURN collect(DISTINCT c) AS hood
}
CALL (hood, ents) {
  UNWIND hood AS c
  MATCH (c)-[:MENTIONS]->(e:Entity)
  WHERE e.namespace = $namespace
  WITH c, e, COUNT { (e)<-[:MENTIONS]-() } AS df
  WITH c, sum(1.0 / df) AS degree, collect(CASE WHEN e IN ents THEN e.id END) AS linked
  RETURN collect({id: c.id, degree: degree}) AS chunk_rows,
         reduce(acc = [], row IN collect({c: c.id, es: linked}) | acc + [e IN row.es | {c: row.c, e: e}]) AS mentions
}
CALL (hood) {
  UNWIND CASE WHEN $chunk_edges THEN hood ELSE [] END AS a
  MATCH (a)-[r:RELATES_TO]->(b)
  WHERE b IN hood
  RETURN collect({a: a.id, b: b.id, w: r.weight}) AS chunk_edges
}
CALL (ents) {
  UNWIND ents AS a
  MATCH (a)-[r:RELATED_TO]->(b)
  WHERE b IN ents
  RETURN collect({a: a.id, b: b.id, w: coalesce(r.weight, 1.0)}) AS relations
}
RETURN [s IN seeds | {id: s.c.id, score: s.score}] AS seeds,
       [q IN qents | {id: q.e.id, name: q.e.name, score: q.score, how: q.how}] AS query_entities,
       [x IN ent_rows | {id: x.e.id, name: x.e.name, df: x.df}] AS entities,
       chunk_rows AS chunks, mentions, chunk_edges, relations
