// Everything entity-boosted retrieval needs, in one round trip:
//   1. candidates: the $chunk_k chunks nearest the query (vector index, namespace and filters,
//      exact cosine scan when the index leaves fewer than $chunk_k), those scoring at least
//      $min_similarity, each with the entities it mentions;
//   2. query entities: the $entity_k entities whose embedding is nearest the query, those
//      scoring at least $entity_floor, and the entities the query names ($entity_keys, the
//      query's word runs; score null), at most $named_max_chunks chunks mentioning each;
//   3. related entities: breadth-first from the query entities over RELATED_TO (both
//      directions) up to $max_hops (0..3, unrolled), filtered by relationship type and
//      sequence, each with distance, strength (weight of its best edge at first reach) and
//      path, exactly as cypher/entities/neighbours.cypher; only those that a returned chunk
//      mentions are returned (no other can earn a boost);
//   4. expansion: when there are fewer than $expand_k candidates, the source chunks of the
//      related entities (strongest relationship first, then nearest, then id) that are not
//      candidates and pass the filters, at most $expand_k, each with its similarity (null
//      without an embedding) and mentions.
// The boost arithmetic and the final ranking are left to Python (retrieval/scoring.py).
// Scores are Neo4j's normalised cosine, (1 + cos) / 2.
// mode: read
// params:
//   $namespace       STRING        tenant
//   $embedding       LIST<FLOAT>   query vector
//   $chunk_k         INTEGER       candidate chunks (default k * 2)
//   $fetch_k         INTEGER       candidates asked of the chunk index before filtering
//   $filter          MAP           {document_ids, source_prefix, meta_pairs, created_after, created_before}
//   $min_similarity  FLOAT         candidates scoring below this are dropped
//   $entity_k        INTEGER       query entities (default 3)
//   $entity_fetch_k  INTEGER       candidates asked of the entity index before the namespace filter
//   $entity_floor    FLOAT         query entities scoring below this are dropped (0 = none)
//   $entity_keys     LIST<MAP>     word runs of the query: [{key, start, end}] ([] = no named entities)
//   $named_max_chunks INTEGER      a named entity mentioned by more chunks is not a query entity
//   $max_hops        INTEGER       hops from the query entities, 0..3
//   $relation_types  LIST<STRING>  relationship types to follow (null = all)
//   $max_sequence    INTEGER       follow only relationships with sequence <= this (null = all)
//   $expand_k        INTEGER       expand when fewer candidates than this (default k; 0 = never)
//   $vector_property  STRING  property holding the namespace's vectors (its embedding model's; `kgrag cypher params` fills it)
//   $chunk_index  STRING  the chunk vector index of the namespace's embedding model
//   $entity_index  STRING  the entity vector index of the namespace's embedding model
// returns: candidates LIST<MAP>, query_entities LIST<MAP>, related LIST<MAP>, expansion LIST<MAP>
// browser: :params {namespace: 'demo', embedding: [], chunk_k: 10, fetch_k: 40, filter: {document_ids: null, source_prefix: null, meta_pairs: [], created_after: null, created_before: null}, min_similarity: 0.0, entity_k: 3, entity_fetch_k: 30, entity_floor: 0.0, entity_keys: [{key: 'neo4j', start: 0, end: 1}], named_max_chunks: 25, max_hops: 1, relation_types: null, max_sequence: null, expand_k: 5, vector_property: 'embedding', chunk_index: 'chunk_embedding', entity_index: 'entity_embedding'}
// In Browser the query vector comes from the namespace's embedder: `kgrag cypher params entities/boost_retrieve --namespace demo --query "..."` prints this line with it.
// Filters ($filter) in Browser: document_ids (list or null), source_prefix (text or null), meta_pairs
// (['key␟value', ...]: key, U+241F, value; values that are not text as JSON), created_after and
// created_before (epoch seconds or null); `kgrag cypher params entities/boost_retrieve --filter meta.KEY=VALUE` writes them.
CALL db.index.vector.queryNodes($chunk_index, toInteger($fetch_k), $embedding) YIELD node, score
WITH node AS c, score
WHERE c.namespace = $namespace
  AND ($filter.document_ids IS NULL OR c.document_id IN $filter.document_ids)
  AND ($filter.source_prefix IS NULL OR c.source STARTS WITH $filter.source_prefix)
  AND all(p IN $filter.meta_pairs WHERE p IN coalesce(c.meta_pairs, []))
  AND ($filter.created_after IS NULL OR c.created_at > $filter.created_after)
  AND ($filter.created_before IS NULL OR c.created_at < $filter.created_before)
WITH c, score ORDER BY score DESC, c.id LIMIT toInteger($chunk_k)
WITH collect({c: c, score: score}) AS hits
CALL (hits) {
  UNWIND CASE WHEN size(hits) >= $chunk_k THEN hits ELSE [] END AS h
  RETURN h.c AS c, h.score AS score
  UNION
  UNWIND CASE WHEN size(hits) < $chunk_k THEN [1] ELSE [] END AS exact
  MATCH (c:Chunk {namespace: $namespace})
  WHERE c[$vector_property] IS NOT NULL
    AND ($filter.document_ids IS NULL OR c.document_id IN $filter.document_ids)
    AND ($filter.source_prefix IS NULL OR c.source STARTS WITH $filter.source_prefix)
    AND all(p IN $filter.meta_pairs WHERE p IN coalesce(c.meta_pairs, []))
    AND ($filter.created_after IS NULL OR c.created_at > $filter.created_after)
    AND ($filter.created_before IS NULL OR c.created_at < $filter.created_before)
  WITH c, vector.similarity.cosine(c[$vector_property], $embedding) AS score
  ORDER BY score DESC, c.id LIMIT toInteger($chunk_k)
  RETURN c, score
}
// an aggregation over no rows still yields one row, so no candidates never drops the statement
WITH c, score WHERE score >= $min_similarity
WITH c, score ORDER BY score DESC, c.id
WITH collect({c: c, score: score}) AS hits
CALL (hits) {
  UNWIND hits AS h
  WITH h.c AS c, h.score AS score
  OPTIONAL MATCH (d:Document)-[:HAS_CHUNK]->(c)
  RETURN collect({chunk: c {.id, .document_id, .content, .chunk_index, .parent_id, .token_count, .metadata,
                            .source, .created_at},
                  title: d.title, score: score,
                  mentions: [(c)-[:MENTIONS]->(m:Entity) WHERE m.namespace = $namespace | m.id]}) AS candidates
}
WITH [h IN hits | h.c] AS candidate_nodes, candidates
// query entities
CALL () {
  CALL db.index.vector.queryNodes($entity_index, toInteger($entity_fetch_k), $embedding) YIELD node, score
  WITH node AS e, score
  WHERE e.namespace = $namespace
  WITH e, score ORDER BY score DESC, e.id LIMIT toInteger($entity_k)
  WITH collect({e: e, score: score}) AS ehits
  CALL (ehits) {
    UNWIND CASE WHEN size(ehits) >= $entity_k THEN ehits ELSE [] END AS h
    RETURN h.e AS e, h.score AS score
    UNION
    UNWIND CASE WHEN size(ehits) < $entity_k THEN [1] ELSE [] END AS exact
    MATCH (e:Entity)
    USING INDEX e:Entity(namespace, name_key)
    WHERE e.namespace = $namespace AND e.name_key IS NOT NULL AND e[$vector_property] IS NOT NULL
    WITH e, vector.similarity.cosine(e[$vector_property], $embedding) AS score
    ORDER BY score DESC, e.id LIMIT toInteger($entity_k)
    RETURN e, score
  }
  WITH e, score WHERE score >= $entity_floor
  WITH e, score ORDER BY score DESC, e.id
  RETURN collect({e: e, score: score}) AS resembled
}
// the entities the query names (exact name key; of overlapping names only the longest), at
// most $named_max_chunks chunks mentioning each, join the query entities
CALL () {
  UNWIND $entity_keys AS k
  MATCH (e:Entity {namespace: $namespace, name_key: k.key})
  WITH collect({e: e, s: k.start, t: k.end}) AS found
  UNWIND [f IN found WHERE none(g IN found WHERE g.s <= f.s AND f.t <= g.t AND g.t - g.s > f.t - f.s)] AS f
  WITH DISTINCT f.e AS e
  WHERE COUNT { (e)<-[:MENTIONS]-() } <= $named_max_chunks
  RETURN collect(e) AS named
}
WITH candidate_nodes, candidates,
     resembled + [e IN named WHERE NOT e IN [r IN resembled | r.e] | {e: e, score: null}] AS query_entities
WITH candidate_nodes, candidates, query_entities, [x IN query_entities | x.e] AS frontier0
// hop 1
CALL (frontier0) {
  CALL (frontier0) {
    UNWIND CASE WHEN $max_hops >= 1 THEN frontier0 ELSE [] END AS n
    RETURN n, null AS via
    UNION ALL
    UNWIND CASE WHEN $max_hops >= 1 THEN frontier0 ELSE [] END AS f
    MATCH (f)-[r:RELATED_TO]-(n:Entity)
    WHERE n.namespace = $namespace
      AND ($relation_types IS NULL OR r.type IN $relation_types)
      AND ($max_sequence IS NULL OR r.sequence IS NULL OR r.sequence <= $max_sequence)
    RETURN n, {id: f.id, name: f.name, type: r.type, weight: r.weight, path: []} AS via
  }
  WITH n, via ORDER BY via.weight DESC, via.id, via.type
  WITH n, count(*) AS reached, collect(via) AS vias
  WHERE size(vias) = reached
  WITH n, head(vias) AS via
  RETURN collect({e: n, distance: 1, strength: via.weight, path: via.path + [[via.name, via.type]]}) AS hop1
}
WITH candidate_nodes, candidates, query_entities, hop1, frontier0 + [h IN hop1 | h.e] AS visited1
// hop 2
CALL (hop1, visited1) {
  CALL (hop1, visited1) {
    UNWIND CASE WHEN $max_hops >= 2 THEN visited1 ELSE [] END AS n
    RETURN n, null AS via
    UNION ALL
    UNWIND CASE WHEN $max_hops >= 2 THEN hop1 ELSE [] END AS fr
    WITH fr.e AS f, fr.path AS fpath
    MATCH (f)-[r:RELATED_TO]-(n:Entity)
    WHERE n.namespace = $namespace
      AND ($relation_types IS NULL OR r.type IN $relation_types)
      AND ($max_sequence IS NULL OR r.sequence IS NULL OR r.sequence <= $max_sequence)
    RETURN n, {id: f.id, name: f.name, type: r.type, weight: r.weight, path: fpath} AS via
  }
  WITH n, via ORDER BY via.weight DESC, via.id, via.type
  WITH n, count(*) AS reached, collect(via) AS vias
  WHERE size(vias) = reached
  WITH n, head(vias) AS via
  RETURN collect({e: n, distance: 2, strength: via.weight, path: via.path + [[via.name, via.type]]}) AS hop2
}
WITH candidate_nodes, candidates, query_entities, hop1, hop2, visited1 + [h IN hop2 | h.e] AS visited2
// hop 3
CALL (hop2, visited2) {
  CALL (hop2, visited2) {
    UNWIND CASE WHEN $max_hops >= 3 THEN visited2 ELSE [] END AS n
    RETURN n, null AS via
    UNION ALL
    UNWIND CASE WHEN $max_hops >= 3 THEN hop2 ELSE [] END AS fr
    WITH fr.e AS f, fr.path AS fpath
    MATCH (f)-[r:RELATED_TO]-(n:Entity)
    WHERE n.namespace = $namespace
      AND ($relation_types IS NULL OR r.type IN $relation_types)
      AND ($max_sequence IS NULL OR r.sequence IS NULL OR r.sequence <= $max_sequence)
    RETURN n, {id: f.id, name: f.name, type: r.type, weight: r.weight, path: fpath} AS via
  }
  WITH n, via ORDER BY via.weight DESC, via.id, via.type
  WITH n, count(*) AS reached, collect(via) AS vias
  WHERE size(vias) = reached
  WITH n, head(vias) AS via
  RETURN collect({e: n, distance: 3, strength: via.weight, path: via.path + [[via.name, via.type]]}) AS hop3
}
WITH candidate_nodes, candidates, query_entities, hop1 + hop2 + hop3 AS related
// expansion
CALL (candidate_nodes, related) {
  UNWIND CASE WHEN size(candidate_nodes) < $expand_k THEN related ELSE [] END AS h
  WITH h WHERE h.e.source_chunk_id IS NOT NULL
  MATCH (c:Chunk {id: h.e.source_chunk_id})
  WHERE c.namespace = $namespace AND NOT c IN candidate_nodes
    AND ($filter.document_ids IS NULL OR c.document_id IN $filter.document_ids)
    AND ($filter.source_prefix IS NULL OR c.source STARTS WITH $filter.source_prefix)
    AND all(p IN $filter.meta_pairs WHERE p IN coalesce(c.meta_pairs, []))
    AND ($filter.created_after IS NULL OR c.created_at > $filter.created_after)
    AND ($filter.created_before IS NULL OR c.created_at < $filter.created_before)
  WITH c, h ORDER BY h.strength DESC, h.distance, h.e.id
  WITH c, head(collect(h)) AS best
  ORDER BY best.strength DESC, best.distance, best.e.id
  LIMIT toInteger($expand_k)
  OPTIONAL MATCH (d:Document)-[:HAS_CHUNK]->(c)
  RETURN collect({chunk: c {.id, .document_id, .content, .chunk_index, .parent_id, .token_count, .metadata,
                            .source, .created_at},
                  title: d.title,
                  score: CASE WHEN c[$vector_property] IS NULL THEN null
                              ELSE vector.similarity.cosine(c[$vector_property], $embedding) END,
                  mentions: [(c)-[:MENTIONS]->(m:Entity) WHERE m.namespace = $namespace | m.id],
                  entity_id: best.e.id, entity: best.e.name, strength: best.strength, distance: best.distance}) AS expansion
}
// only the related entities some returned chunk mentions can earn a boost: keep those
// (matched by grouping, so the cost stays linear in the number of related entities)
CALL (candidates, expansion, related) {
  CALL (candidates, expansion, related) {
    UNWIND related AS h
    RETURN h.e.id AS id, h AS hit
    UNION ALL
    UNWIND candidates + expansion AS x
    UNWIND x.mentions AS id
    RETURN id, null AS hit
  }
  WITH id, count(*) AS rows, collect(hit) AS hits
  WHERE size(hits) = 1 AND rows > 1
  WITH hits[0] AS h ORDER BY h.distance, h.strength DESC, h.e.id
  RETURN collect({id: h.e.id, name: h.e.name, distance: h.distance, strength: h.strength, path: h.path}) AS mentioned_related
}
RETURN candidates,
       [x IN query_entities | {id: x.e.id, name: x.e.name, type: x.e.type, score: x.score}] AS query_entities,
       mentioned_related AS related,
       expansion
