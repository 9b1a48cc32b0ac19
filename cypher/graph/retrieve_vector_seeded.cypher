// graph/retrieve for its most common case, in less work: vector seeds only (no keyword or
// entity seeds, no filters) and at most 2 hops. It returns exactly the rows graph/retrieve
// returns for those parameters, in one record: `rows`, a list of maps whose keys are
// graph/retrieve's columns, in its order (tests/test_graph_retrieve_lean.py compares them row by
// row). The store picks it by itself. What it saves:
// - the keyword, fusion and entity stages are absent rather than run over empty lists;
// - a hop's entries are built once (chunk, cosine, score, best edges in one map), not copied
//   stage by stage;
// - hop 2 is not expanded when it cannot change the result: every score it could give is at
//   most graph_weight * hop_decay[2] (blend 'seed'; edge weights are in (0, 1]) or
//   vector_weight + graph_weight * max(0, best hop-1 score) * hop_decay[2] ('propagate'), so
//   once the $top_k-th best score so far is above that bound, the rows are already final.
//   Under 'seed' with the default weights this skips hop 2 whenever $top_k seeds and hop-1
//   chunks score above 0.15, e.g. a seed's neighbours along its document.
// - one record instead of $top_k: the driver decodes and wraps each record on its own (0.25 ms
//   of client CPU for 20 rows);
// - no UNION for the seeds: the exact scan of a small namespace is a subquery over no rows
//   unless it is needed.
// Seeds, expansion, scores, ties and the returned edge are graph/retrieve's, which documents
// them.
// mode: read
// params:
//   $namespace           STRING        tenant
//   $embedding           LIST<FLOAT>   query vector
//   $seed_top_k          INTEGER       seeds kept
//   $fetch_k             INTEGER       candidates asked of the vector index before filtering
//   $max_hops            INTEGER       hops to expand, 0..2
//   $hop_decay           LIST<FLOAT>   decay per hop, index 0 = seeds
//   $vector_weight       FLOAT         weight of the seed score (seed) / of the cosine (propagate)
//   $graph_weight        FLOAT         weight of the graph score
//   $bidirectional       BOOLEAN       also follow incoming edges
//   $relations           LIST<STRING>  relation kinds to follow (null = all)
//   $min_weight          FLOAT         edges below this weight are not followed
//   $top_k               INTEGER       results returned
//   $blend               STRING        'seed' or 'propagate'
//   $refine_seeds        BOOLEAN       also score the chunks one edge from the index's seeds (see graph/retrieve)
//   $vector_property  STRING  property holding the namespace's vectors (its embedding model's; `kgrag cypher params` fills it)
//   $chunk_index  STRING  the chunk vector index of the namespace's embedding model
// returns: rows LIST<MAP>
// browser: :params {namespace: 'demo', embedding: [], seed_top_k: 10, fetch_k: 200, max_hops: 2, hop_decay: [1.0, 0.7, 0.5], vector_weight: 0.7, graph_weight: 0.3, bidirectional: true, relations: null, min_weight: 0.0, top_k: 20, blend: 'seed', refine_seeds: false, vector_property: 'embedding', chunk_index: 'chunk_embedding'}
// In Browser the query vector comes from the namespace's embedder: `kgrag cypher params graph/retrieve_vector_seeded --namespace demo --query "..."` prints this line with it.
CALL db.index.vector.queryNodes($chunk_index, toInteger($fetch_k), $embedding) YIELD node, score
WITH node AS c, score
WHERE c.namespace = $namespace
WITH c, score ORDER BY score DESC, c.id LIMIT toInteger($seed_top_k)
WITH collect({c: c, score: score}) AS vhits
// refined seeds (graph/retrieve says why): the chunks one edge from the index's seeds, by
// their exact cosine, and the best $seed_top_k of both
CALL (vhits) {
  UNWIND CASE WHEN $refine_seeds AND size(vhits) >= $seed_top_k THEN vhits ELSE [] END AS h
  WITH h.c AS f
  MATCH (f)-[:RELATES_TO]-(n)
  WHERE n.namespace = $namespace AND n[$vector_property] IS NOT NULL
  WITH DISTINCT n WHERE NOT n IN [x IN vhits | x.c]
  RETURN collect({c: n, score: vector.similarity.cosine(n[$vector_property], $embedding)}) AS near
}
CALL (vhits, near) {
  UNWIND CASE WHEN size(near) > 0 THEN vhits + near ELSE [] END AS h
  WITH h ORDER BY h.score DESC, h.c.id LIMIT toInteger($seed_top_k)
  RETURN collect(h) AS refined
}
WITH CASE WHEN size(near) > 0 THEN refined ELSE vhits END AS vhits
// a namespace too small for the shared index to return $seed_top_k of its chunks: exact scan
// (a subquery over no rows unless needed; its collect gives [] then)
CALL (vhits) {
  UNWIND CASE WHEN size(vhits) < $seed_top_k THEN [1] ELSE [] END AS exact
  MATCH (c:Chunk {namespace: $namespace})
  WHERE c[$vector_property] IS NOT NULL
  WITH c, vector.similarity.cosine(c[$vector_property], $embedding) AS score
  ORDER BY score DESC, c.id LIMIT toInteger($seed_top_k)
  RETURN collect({c: c, score: score}) AS exact
}
WITH [h IN CASE WHEN size(vhits) >= $seed_top_k THEN vhits ELSE exact END |
      {c: h.c, v: h.score, s: CASE WHEN $blend = 'seed' THEN $vector_weight * h.score + $graph_weight
                                   ELSE $vector_weight * (2 * h.score - 1) END}] AS seeds
WITH seeds, [x IN seeds | x.c] AS visited0,
     $hop_decay[CASE WHEN 1 < size($hop_decay) THEN 1 ELSE size($hop_decay) - 1 END] AS decay1,
     $hop_decay[CASE WHEN 2 < size($hop_decay) THEN 2 ELSE size($hop_decay) - 1 END] AS decay2
// hop 1 (under 'propagate' a seed reached from another seed scores the better of its two scores)
CALL (seeds, visited0, decay1) {
  UNWIND CASE WHEN $max_hops >= 1 THEN seeds ELSE [] END AS fr
  WITH fr.c AS f, fr.s AS fs
  CALL (f) {
    WITH f WHERE NOT $bidirectional
    MATCH (f)-[r:RELATES_TO]->(n) RETURN r, n
    UNION ALL
    WITH f WHERE $bidirectional
    MATCH (f)-[r:RELATES_TO]-(n) RETURN r, n
  }
  WITH f, r, n, CASE WHEN $blend = 'seed' THEN r.weight ELSE fs * r.weight END AS via
  WHERE n.namespace = $namespace AND n <> f AND ($blend = 'propagate' OR NOT n IN visited0)
    AND r.weight >= $min_weight AND ($relations IS NULL OR r.relation IN $relations)
  WITH n, max(via) AS best, collect({f: f, r: r, v: via}) AS edges
  WITH n, best, edges, CASE WHEN $blend = 'seed' THEN null ELSE vector.similarity.cosine(n[$vector_property], $embedding) END AS vs
  RETURN collect({c: n, vs: vs, e: [e IN edges WHERE e.v = best],
                  s: CASE WHEN $blend = 'seed' THEN $graph_weight * best * decay1
                          ELSE $vector_weight * (2 * coalesce(vs, 0.5) - 1) + $graph_weight * best * decay1 END}) AS reached1
}
WITH visited0, decay2, [h IN reached1 WHERE NOT h.c IN visited0] AS hop1,
     CASE WHEN $blend = 'seed' THEN seeds  // only 'propagate' reaches seeds at hop 1
          ELSE [x IN seeds | head([h IN reached1 WHERE h.c = x.c AND h.s > x.s | x {.c, .v, s: h.s, e: h.e}] + [x])] END AS seeds
WITH seeds, hop1, decay2, visited0 + [h IN hop1 | h.c] AS visited1,
     reduce(m = 0.0, h IN hop1 | CASE WHEN h.s > m THEN h.s ELSE m END) AS best1
// whether hop 2 could still place a row among the first $top_k (see the header): not when
// $top_k rows already score above the most it could give
WITH seeds, hop1, visited1,
     $max_hops >= 2 AND size([s IN [x IN seeds | x.s] + [h IN hop1 | h.s]
                              WHERE s > CASE WHEN $blend = 'seed' THEN $graph_weight * decay2
                                             ELSE $vector_weight + $graph_weight * best1 * decay2 END]) < $top_k AS expand2, decay2
// hop 2
CALL (hop1, visited1, decay2, expand2) {
  UNWIND CASE WHEN expand2 THEN hop1 ELSE [] END AS fr
  WITH fr.c AS f, fr.s AS fs
  CALL (f) {
    WITH f WHERE NOT $bidirectional
    MATCH (f)-[r:RELATES_TO]->(n) RETURN r, n
    UNION ALL
    WITH f WHERE $bidirectional
    MATCH (f)-[r:RELATES_TO]-(n) RETURN r, n
  }
  WITH f, r, n, CASE WHEN $blend = 'seed' THEN r.weight ELSE fs * r.weight END AS via
  WHERE n.namespace = $namespace AND NOT n IN visited1
    AND r.weight >= $min_weight AND ($relations IS NULL OR r.relation IN $relations)
  WITH n, max(via) AS best, collect({f: f, r: r, v: via}) AS edges
  WITH n, best, edges, CASE WHEN $blend = 'seed' THEN null ELSE vector.similarity.cosine(n[$vector_property], $embedding) END AS vs
  RETURN collect({c: n, vs: vs, e: [e IN edges WHERE e.v = best],
                  s: CASE WHEN $blend = 'seed' THEN $graph_weight * best * decay2
                          ELSE $vector_weight * (2 * coalesce(vs, 0.5) - 1) + $graph_weight * best * decay2 END}) AS hop2
}
UNWIND [x IN seeds | {c: x.c, hop: 0, edges: x.e, seed_score: x.v, vector_score: x.v, entity_score: 0.0, entity_names: [], score: x.s}]
       + [h IN hop1 | {c: h.c, hop: 1, edges: h.e, vector_score: h.vs, score: h.s}]
       + [h IN hop2 | {c: h.c, hop: 2, edges: h.e, vector_score: h.vs, score: h.s}] AS x
WITH x ORDER BY x.score DESC, x.c.id LIMIT toInteger($top_k)
// the edge a graph hit came through: of its best edges, the lowest from-chunk id, then relation,
// then description (nulls last), as graph/retrieve's ORDER BY, without a subquery per row
WITH x, reduce(b = null, e IN coalesce(x.edges, []) |
         CASE WHEN b IS NULL OR e.f.id < b.from_chunk_id
                   OR (e.f.id = b.from_chunk_id AND (e.r.relation < b.relation
                       OR (e.r.relation = b.relation AND e.r.description IS NOT NULL
                           AND (b.description IS NULL OR e.r.description < b.description))))
              THEN {from_chunk_id: e.f.id, relation: e.r.relation, weight: e.r.weight, description: e.r.description}
              ELSE b END) AS came_through
WITH x, x.c AS c, came_through
OPTIONAL MATCH (d:Document)-[:HAS_CHUNK]->(c)
WITH c {.id, .document_id, .content, .chunk_index, .parent_id, .token_count, .metadata, .source, .created_at, .document_hash, .document_title} AS chunk,
       d.title AS title, d.content_hash AS document_hash, x.score AS score, x.hop AS hop, x.seed_score AS seed_score,
       x.vector_score AS vector_score, null AS keyword_score, x.entity_score AS entity_score,
       x.entity_names AS entity_names, came_through AS via
ORDER BY score DESC, chunk.id
// one record holding the rows: the driver decodes one record instead of $top_k
RETURN collect({chunk: chunk, title: title, document_hash: document_hash, score: score, hop: hop, seed_score: seed_score, vector_score: vector_score, keyword_score: keyword_score, entity_score: entity_score, entity_names: entity_names, via: via}) AS rows
