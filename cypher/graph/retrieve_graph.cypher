// graph/retrieve as a graph, for Neo4j Browser's graph view: the same retrieval (same
// parameters, seeds, expansion, scores and $top_k results; graph/retrieve documents them), returned
// as the chunks found, the chunks the graph-found ones came from, and every RELATES_TO edge
// between those chunks (the edge each result came through among them). `results` says, per
// result, its score, hop (0: a seed) and the chunk and relation it came through.
// In Browser: run the :params line `kgrag cypher params graph/retrieve_graph --query "..."` prints
// (the same values `kgrag search --mode graph` uses), then this file; the Graph tab draws it.
// mode: read
// params:
//   $namespace           STRING        tenant
//   $embedding           LIST<FLOAT>   query vector
//   $keyword_query       STRING        escaped full-text query, as chunks/search_keyword's ('' when keyword seeding is off)
//   $keyword_weight      FLOAT         RRF weight of the keyword list (0 = vector seeds only)
//   $rrf_k               INTEGER       RRF constant (60)
//   $seed_top_k          INTEGER       seeds kept
//   $fetch_k             INTEGER       candidates asked of each index before filtering
//   $filter              MAP           {document_ids, source_prefix, meta_pairs, created_after, created_before}
//   $max_hops            INTEGER       hops to expand, 0..4
//   $hop_decay           LIST<FLOAT>   decay per hop, index 0 = seeds
//   $vector_weight       FLOAT         weight of the seed score (seed) / of the cosine (propagate)
//   $graph_weight        FLOAT         weight of the graph score
//   $bidirectional       BOOLEAN       also follow incoming edges
//   $relations           LIST<STRING>  relation kinds to follow (null = all)
//   $min_weight          FLOAT         edges below this weight are not followed
//   $top_k               INTEGER       results returned
//   $blend               STRING        'seed' or 'propagate'
//   $entity_keys         LIST<MAP>     word runs of the query: [{key, start, end}] ([] = no entity seeds)
//   $entity_seed_weight  FLOAT         weight of sum(1 / df) of the query entities a seed mentions (0 = off)
//   $entity_max_chunks   INTEGER       entities mentioned by more chunks than this seed nothing
//   $refine_seeds        BOOLEAN       also score the chunks one edge from the index's vector seeds (below)
//   $vector_property  STRING  property holding the namespace's vectors (its embedding model's; `kgrag cypher params` fills it)
//   $chunk_index  STRING  the chunk vector index of the namespace's embedding model
// returns: nodes LIST<NODE>, relationships LIST<RELATIONSHIP>, results LIST<MAP>
// browser: :params {namespace: 'demo', embedding: [], keyword_query: '', keyword_weight: 0.0, rrf_k: 60, seed_top_k: 10, fetch_k: 200, filter: {document_ids: null, source_prefix: null, meta_pairs: [], created_after: null, created_before: null}, max_hops: 2, hop_decay: [1.0, 0.7, 0.5], vector_weight: 0.7, graph_weight: 0.3, bidirectional: false, relations: null, min_weight: 0.0, top_k: 5, blend: 'propagate', entity_keys: [], entity_seed_weight: 0.35, entity_max_chunks: 25, refine_seeds: true, vector_property: 'embedding', chunk_index: 'chunk_embedding'}
// In Browser the query vector comes from the namespace's embedder: `kgrag cypher params graph/retrieve_graph --namespace demo --query "..."` prints this line with it.
// Filters ($filter) in Browser: document_ids (list or null), source_prefix (text or null), meta_pairs
// (['key␟value', ...]: key, U+241F, value; values that are not text as JSON), created_after and
// created_before (epoch seconds or null); `kgrag cypher params graph/retrieve_graph --filter meta.KEY=VALUE` writes them.
// The full-text query names its namespace; `kgrag cypher params graph/retrieve_graph --query "..."` writes it from any text.
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
// Refined seeds ($refine_seeds): the index is approximate, and the chunks it misses are most
// often near-copies of one it found (the next chunk of the same page, a repeated paragraph),
// which an edge joins to it. So the chunks one edge from the index's seeds (any relation,
// either direction, passing the namespace and filters) are scored by their exact cosine, and
// the best $seed_top_k of both are the vector seeds. Not when the index gave fewer than
// $seed_top_k: the exact scan below is exact already.
CALL (vhits) {
  UNWIND CASE WHEN $refine_seeds AND size(vhits) >= $seed_top_k THEN vhits ELSE [] END AS h
  WITH h.c AS f
  MATCH (f)-[:RELATES_TO]-(n)
  WHERE n.namespace = $namespace AND n[$vector_property] IS NOT NULL
    AND ($filter.document_ids IS NULL OR n.document_id IN $filter.document_ids)
    AND ($filter.source_prefix IS NULL OR n.source STARTS WITH $filter.source_prefix)
    AND all(p IN $filter.meta_pairs WHERE p IN coalesce(n.meta_pairs, []))
    AND ($filter.created_after IS NULL OR n.created_at > $filter.created_after)
    AND ($filter.created_before IS NULL OR n.created_at < $filter.created_before)
  WITH DISTINCT n WHERE NOT n IN [x IN vhits | x.c]
  RETURN collect({c: n, score: vector.similarity.cosine(n[$vector_property], $embedding)}) AS near
}
// merged in a CALL of its own: `vhits + collect(...)` in the one above would group by vhits
// and, with no neighbour, yield no row at all
CALL (vhits, near) {
  UNWIND CASE WHEN size(near) > 0 THEN vhits + near ELSE [] END AS h
  WITH h ORDER BY h.score DESC, h.c.id LIMIT toInteger($seed_top_k)
  RETURN collect(h) AS refined
}
WITH CASE WHEN size(near) > 0 THEN refined ELSE vhits END AS vhits
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
// an aggregation over no rows still yields one row, so no seeds never drops the statement
WITH c, score ORDER BY score DESC, c.id
WITH collect({c: c, score: score}) AS vseeds
// keyword seeds, namespace-exact as in chunks/search_keyword: the index is asked for $fetch_k
// hits of the namespace's Lucene query; when fewer than $seed_top_k pass and it had more to
// give, every hit is read (score 0: the namespace phrase alone matched, no term did)
CALL () {
  UNWIND CASE WHEN $keyword_weight > 0 AND $keyword_query <> '' THEN [1] ELSE [] END AS on
  CALL db.index.fulltext.queryNodes('chunk_content', $keyword_query, {limit: toInteger($fetch_k)}) YIELD node, score
  RETURN collect({c: node, score: score}) AS kraw
}
CALL (kraw) {
  UNWIND kraw AS h
  WITH h.c AS c, h.score AS score
  WHERE score > 0 AND c.namespace = $namespace
    AND ($filter.document_ids IS NULL OR c.document_id IN $filter.document_ids)
    AND ($filter.source_prefix IS NULL OR c.source STARTS WITH $filter.source_prefix)
    AND all(p IN $filter.meta_pairs WHERE p IN coalesce(c.meta_pairs, []))
    AND ($filter.created_after IS NULL OR c.created_at > $filter.created_after)
    AND ($filter.created_before IS NULL OR c.created_at < $filter.created_before)
  WITH c, score ORDER BY score DESC, c.id LIMIT toInteger($seed_top_k)
  RETURN collect({c: c, score: score}) AS khits
}
CALL (kraw, khits) {
  CALL (kraw, khits) {
    UNWIND CASE WHEN size(khits) >= $seed_top_k OR size(kraw) < $fetch_k THEN khits ELSE [] END AS h
    RETURN h.c AS c, h.score AS score
    UNION
    UNWIND CASE WHEN size(khits) < $seed_top_k AND size(kraw) >= $fetch_k THEN [1] ELSE [] END AS exact
    CALL db.index.fulltext.queryNodes('chunk_content', $keyword_query) YIELD node, score
    WITH node AS c, score
    WHERE score > 0 AND c.namespace = $namespace
        AND ($filter.document_ids IS NULL OR c.document_id IN $filter.document_ids)
        AND ($filter.source_prefix IS NULL OR c.source STARTS WITH $filter.source_prefix)
        AND all(p IN $filter.meta_pairs WHERE p IN coalesce(c.meta_pairs, []))
        AND ($filter.created_after IS NULL OR c.created_at > $filter.created_after)
        AND ($filter.created_before IS NULL OR c.created_at < $filter.created_before)
    WITH c, score ORDER BY score DESC, c.id LIMIT toInteger($seed_top_k)
    RETURN c, score
  }
  WITH c, score ORDER BY score DESC, c.id
  RETURN collect({c: c, score: score}) AS kseeds
}
// fuse: without keyword seeds this keeps the vector seeds and their cosine scores
WITH vseeds, kseeds, [h IN vseeds | h.c] AS vnodes, [h IN kseeds | h.c] AS knodes
UNWIND vnodes + [n IN knodes WHERE NOT n IN vnodes] AS s
WITH s, vseeds, kseeds, vnodes, knodes,
     [i IN range(0, size(vnodes) - 1) WHERE vnodes[i] = s][0] AS vrank,
     [i IN range(0, size(knodes) - 1) WHERE knodes[i] = s][0] AS krank
WITH s,
     CASE WHEN vrank IS NULL THEN null ELSE vseeds[vrank].score END AS vector_score,
     CASE WHEN krank IS NULL THEN null ELSE kseeds[krank].score END AS keyword_score,
     CASE WHEN size(knodes) = 0
          THEN vseeds[vrank].score
          ELSE ($rrf_k + 1) * (
                 (1 - $keyword_weight) * CASE WHEN vrank IS NULL THEN 0.0 ELSE 1.0 / ($rrf_k + vrank + 1) END
               + $keyword_weight * CASE WHEN krank IS NULL THEN 0.0 ELSE 1.0 / ($rrf_k + krank + 1) END)
     END AS seed_score
ORDER BY seed_score DESC, s.id
LIMIT toInteger($seed_top_k)
WITH collect({c: s, seed_score: seed_score, vector_score: vector_score, keyword_score: keyword_score}) AS ranked
// entity seeds: chunks mentioning a rare entity the query names
CALL () {
  UNWIND CASE WHEN $entity_seed_weight > 0 THEN $entity_keys ELSE [] END AS k
  MATCH (e:Entity {namespace: $namespace, name_key: k.key})
  WITH collect({e: e, s: k.start, t: k.end}) AS found
  // like the gazetteer: of overlapping names found in the query, only the longest
  UNWIND [f IN found WHERE none(g IN found WHERE g.s <= f.s AND f.t <= g.t AND g.t - g.s > f.t - f.s)] AS f
  WITH DISTINCT f.e AS e
  WITH e, COUNT { (e)<-[:MENTIONS]-() } AS df
  WHERE 0 < df <= $entity_max_chunks
  MATCH (c:Chunk)-[:MENTIONS]->(e)
  WHERE c.namespace = $namespace AND c[$vector_property] IS NOT NULL
    AND ($filter.document_ids IS NULL OR c.document_id IN $filter.document_ids)
    AND ($filter.source_prefix IS NULL OR c.source STARTS WITH $filter.source_prefix)
    AND all(p IN $filter.meta_pairs WHERE p IN coalesce(c.meta_pairs, []))
    AND ($filter.created_after IS NULL OR c.created_at > $filter.created_after)
    AND ($filter.created_before IS NULL OR c.created_at < $filter.created_before)
  WITH c, sum(1.0 / df) AS ent, collect(DISTINCT e.name) AS names
  RETURN collect({c: c, ent: ent, names: names}) AS eseeds
}
WITH ranked, eseeds, [x IN ranked | x.c] AS rnodes
WITH ranked + [x IN eseeds WHERE NOT x.c IN rnodes | {c: x.c, seed_score: null, vector_score: null, keyword_score: null}] AS starts,
     eseeds, [x IN eseeds | x.c] AS enodes
UNWIND starts AS x
WITH x, eseeds, enodes, [i IN range(0, size(enodes) - 1) WHERE enodes[i] = x.c][0] AS erank
WITH x, CASE WHEN erank IS NULL THEN 0.0 ELSE eseeds[erank].ent END AS ent,
     CASE WHEN erank IS NULL THEN [] ELSE eseeds[erank].names END AS names,
     coalesce(x.vector_score, vector.similarity.cosine(x.c[$vector_property], $embedding)) AS vs
WITH x, ent, names, vs,
     CASE WHEN $blend = 'seed'
          THEN $vector_weight * coalesce(x.seed_score, vs) + $graph_weight * 1.0
          ELSE $vector_weight * (2 * coalesce(vs, 0.5) - 1) + $entity_seed_weight * ent END AS start
WITH collect({c: x.c, hop: 0, edges: null, seed_score: coalesce(x.seed_score, vs),
              vector_score: vs,
              keyword_score: x.keyword_score, entity_score: ent, entity_names: names, score: start}) AS seeds
WITH seeds, [x IN seeds | {c: x.c, s: x.score}] AS frontier0, [x IN seeds | x.c] AS visited0
// hop 1 (under 'propagate' a seed reached from another seed scores the better of its two scores)
CALL (frontier0, visited0) {
  UNWIND CASE WHEN $max_hops >= 1 THEN frontier0 ELSE [] END AS fr
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
  RETURN collect({c: n, hop: 1, best: best, edges: [e IN edges WHERE e.v = best]}) AS reached1
}
WITH seeds, visited0,
     [h IN reached1 | h {.*, vs: CASE WHEN $blend = 'seed' THEN null ELSE vector.similarity.cosine(h.c[$vector_property], $embedding) END}] AS hop1v
WITH *, [h IN hop1v | h {.*, score: CASE WHEN $blend = 'seed' THEN $graph_weight * h.best * $hop_decay[CASE WHEN 1 < size($hop_decay) THEN 1 ELSE size($hop_decay) - 1 END]
                                    ELSE $vector_weight * (2 * coalesce(h.vs, 0.5) - 1) + $graph_weight * h.best * $hop_decay[CASE WHEN 1 < size($hop_decay) THEN 1 ELSE size($hop_decay) - 1 END] END}] AS hop1all
WITH visited0, [h IN hop1all WHERE NOT h.c IN visited0] AS hop1,
     [x IN seeds | CASE WHEN size([h IN hop1all WHERE h.c = x.c AND h.score > x.score]) = 0 THEN x
                        ELSE x {.*, score: [h IN hop1all WHERE h.c = x.c][0].score, edges: [h IN hop1all WHERE h.c = x.c][0].edges} END] AS seeds
WITH seeds, hop1, visited0 + [h IN hop1 | h.c] AS visited1, [h IN hop1 | {c: h.c, s: h.score}] AS frontier1
// hop 2
CALL (visited1, frontier1) {
  UNWIND CASE WHEN $max_hops >= 2 THEN frontier1 ELSE [] END AS fr
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
  RETURN collect({c: n, hop: 2, best: best, edges: [e IN edges WHERE e.v = best]}) AS hop2
}
WITH seeds, hop1, visited1,
     [h IN hop2 | h {.*, vs: CASE WHEN $blend = 'seed' THEN null ELSE vector.similarity.cosine(h.c[$vector_property], $embedding) END}] AS hop2v
WITH *, [h IN hop2v | h {.*, score: CASE WHEN $blend = 'seed' THEN $graph_weight * h.best * $hop_decay[CASE WHEN 2 < size($hop_decay) THEN 2 ELSE size($hop_decay) - 1 END]
                                    ELSE $vector_weight * (2 * coalesce(h.vs, 0.5) - 1) + $graph_weight * h.best * $hop_decay[CASE WHEN 2 < size($hop_decay) THEN 2 ELSE size($hop_decay) - 1 END] END}] AS hop2
WITH seeds, hop1 + hop2 AS hits, visited1 + [h IN hop2 | h.c] AS visited2, [h IN hop2 | {c: h.c, s: h.score}] AS frontier2
// hop 3
CALL (visited2, frontier2) {
  UNWIND CASE WHEN $max_hops >= 3 THEN frontier2 ELSE [] END AS fr
  WITH fr.c AS f, fr.s AS fs
  CALL (f) {
    WITH f WHERE NOT $bidirectional
    MATCH (f)-[r:RELATES_TO]->(n) RETURN r, n
    UNION ALL
    WITH f WHERE $bidirectional
    MATCH (f)-[r:RELATES_TO]-(n) RETURN r, n
  }
  WITH f, r, n, CASE WHEN $blend = 'seed' THEN r.weight ELSE fs * r.weight END AS via
  WHERE n.namespace = $namespace AND NOT n IN visited2
    AND r.weight >= $min_weight AND ($relations IS NULL OR r.relation IN $relations)
  WITH n, max(via) AS best, collect({f: f, r: r, v: via}) AS edges
  RETURN collect({c: n, hop: 3, best: best, edges: [e IN edges WHERE e.v = best]}) AS hop3
}
WITH seeds, hits, visited2,
     [h IN hop3 | h {.*, vs: CASE WHEN $blend = 'seed' THEN null ELSE vector.similarity.cosine(h.c[$vector_property], $embedding) END}] AS hop3v
WITH *, [h IN hop3v | h {.*, score: CASE WHEN $blend = 'seed' THEN $graph_weight * h.best * $hop_decay[CASE WHEN 3 < size($hop_decay) THEN 3 ELSE size($hop_decay) - 1 END]
                                    ELSE $vector_weight * (2 * coalesce(h.vs, 0.5) - 1) + $graph_weight * h.best * $hop_decay[CASE WHEN 3 < size($hop_decay) THEN 3 ELSE size($hop_decay) - 1 END] END}] AS hop3
WITH seeds, hits + hop3 AS hits, visited2 + [h IN hop3 | h.c] AS visited3, [h IN hop3 | {c: h.c, s: h.score}] AS frontier3
// hop 4
CALL (visited3, frontier3) {
  UNWIND CASE WHEN $max_hops >= 4 THEN frontier3 ELSE [] END AS fr
  WITH fr.c AS f, fr.s AS fs
  CALL (f) {
    WITH f WHERE NOT $bidirectional
    MATCH (f)-[r:RELATES_TO]->(n) RETURN r, n
    UNION ALL
    WITH f WHERE $bidirectional
    MATCH (f)-[r:RELATES_TO]-(n) RETURN r, n
  }
  WITH f, r, n, CASE WHEN $blend = 'seed' THEN r.weight ELSE fs * r.weight END AS via
  WHERE n.namespace = $namespace AND NOT n IN visited3
    AND r.weight >= $min_weight AND ($relations IS NULL OR r.relation IN $relations)
  WITH n, max(via) AS best, collect({f: f, r: r, v: via}) AS edges
  RETURN collect({c: n, hop: 4, best: best, edges: [e IN edges WHERE e.v = best]}) AS hop4
}
WITH seeds, hits,
     [h IN hop4 | h {.*, vs: CASE WHEN $blend = 'seed' THEN null ELSE vector.similarity.cosine(h.c[$vector_property], $embedding) END}] AS hop4v
WITH *, [h IN hop4v | h {.*, score: CASE WHEN $blend = 'seed' THEN $graph_weight * h.best * $hop_decay[CASE WHEN 4 < size($hop_decay) THEN 4 ELSE size($hop_decay) - 1 END]
                                    ELSE $vector_weight * (2 * coalesce(h.vs, 0.5) - 1) + $graph_weight * h.best * $hop_decay[CASE WHEN 4 < size($hop_decay) THEN 4 ELSE size($hop_decay) - 1 END] END}] AS hop4
WITH seeds + [h IN hits + hop4 | {c: h.c, hop: h.hop, edges: h.edges, seed_score: null, vector_score: h.vs, keyword_score: null,
                                  entity_score: null, entity_names: null, score: h.score}] AS scored
// the k-th best score first (no property reads), so only rows at or above it read their id for the tie order
CALL (scored) {
  UNWIND scored AS x
  WITH x.score AS s ORDER BY s DESC LIMIT toInteger($top_k)
  RETURN min(s) AS cutoff
}
UNWIND [x IN scored WHERE x.score >= cutoff] AS x
WITH x ORDER BY x.score DESC, x.c.id LIMIT toInteger($top_k)
// the edge a graph hit came through, picked as graph/retrieve picks it
CALL (x) {
  UNWIND coalesce(x.edges, []) AS e
  WITH e ORDER BY e.f.id, e.r.relation, e.r.description
  RETURN head(collect(e)) AS came
}
WITH collect({c: x.c, score: x.score, hop: x.hop, came: came}) AS top
CALL (top) {
  UNWIND [t IN top | t.c] + [t IN top WHERE t.came IS NOT NULL | t.came.f] AS n
  RETURN collect(DISTINCT n) AS shown
}
// every edge between the chunks shown: each was checked for the namespace on the way in
CALL (shown) {
  UNWIND shown AS a
  MATCH (a)-[r:RELATES_TO]->(b)
  WHERE b IN shown
  RETURN collect(r) AS relationships
}
RETURN shown AS nodes, relationships,
       [t IN top | {id: t.c.id, score: t.score, hop: t.hop,
                    came_from: CASE WHEN t.came IS NULL THEN null ELSE t.came.f.id END,
                    relation: CASE WHEN t.came IS NULL THEN null ELSE t.came.r.relation END}] AS results
