// Phase 2 of two-phase triple retrieval in one statement: breadth-first expansion over RELATED_TO
// (both directions, only the given types) from start entities, to $max_depth hops (1..3),
// at most $limit nodes. Start entities are those named in $start_keys (rank = position) and
// those the chunks in $chunk_ids mention (rank = size($start_keys) + position): a chunk's
// MENTIONS lead to its entities, and entities of the same normalised name (of any type) are
// the same start point, so extractor entities and triple entities meet. Start entities are
// never returned. A node is reported at the first hop that reaches it, through its best
// edge at that hop (lowest rank, then from-node name, then predicate); results are ordered
// by hop, rank, name. Each hop expands only the frontier, and a hop is skipped once $limit
// nodes are found, so cost grows with what is returned, not with the number of paths.
// Why the expansion sits in a CALL with no predicate on the relationship: given
// `r.type IN $predicates`, the planner may answer with the related_to_type index (every
// edge of those types, all namespaces, per frontier node); inside the CALL it can only
// expand the frontier node.
// mode: read
// params:
//   $namespace   STRING        tenant
//   $start_keys  LIST<STRING>  normalise_name of the entities to start from
//   $chunk_ids   LIST<STRING>  chunks whose mentioned entities are start points too
//   $predicates  LIST<STRING>  RELATED_TO types to follow
//   $max_depth   INTEGER       hops, 1..3
//   $limit       INTEGER       nodes returned at most
// returns: name STRING, type STRING, predicate STRING, from_name STRING, depth INTEGER, outgoing BOOLEAN, rank INTEGER
// browser: :params {namespace: 'demo', start_keys: ['tool:http_client'], chunk_ids: [], predicates: ['related_to', 'resolved_by', 'caused_by', 'similar_to'], max_depth: 2, limit: 10}
CALL () {
  UNWIND range(0, size($start_keys) - 1) AS i
  MATCH (e:Entity {namespace: $namespace, name_key: $start_keys[i]})
  USING INDEX e:Entity(namespace, name_key)
  RETURN e, i AS rank
  UNION ALL
  UNWIND range(0, size($chunk_ids) - 1) AS i
  MATCH (c:Chunk {id: $chunk_ids[i]})-[:MENTIONS]->(m:Entity)
  WHERE c.namespace = $namespace AND m.name_key IS NOT NULL
  MATCH (e:Entity {namespace: $namespace, name_key: m.name_key})
  USING INDEX e:Entity(namespace, name_key)
  RETURN e, size($start_keys) + i AS rank
}
WITH e, min(rank) AS rank
WITH collect({n: e, rank: rank}) AS frontier0
WITH frontier0, [f IN frontier0 | f.n] AS visited0
// hop 1
CALL (frontier0, visited0) {
  UNWIND CASE WHEN $max_depth >= 1 THEN frontier0 ELSE [] END AS f
  WITH f.n AS fn, f.rank AS rank
  CALL (fn) { MATCH (fn)-[r:RELATED_TO]-(n:Entity) RETURN r, n }
  WITH fn, rank, r, n
  WHERE r.type IN $predicates AND n.namespace = $namespace AND NOT n IN visited0
  WITH n, fn, r, rank ORDER BY rank, fn.name, r.type
  WITH n, head(collect({rank: rank, from_name: fn.name, predicate: r.type, outgoing: startNode(r) = fn})) AS via
  RETURN collect({n: n, depth: 1, via: via}) AS hop1
}
WITH hop1, visited0 + [h IN hop1 | h.n] AS visited1, [h IN hop1 | {n: h.n, rank: h.via.rank}] AS frontier1
// hop 2
CALL (hop1, visited1, frontier1) {
  UNWIND CASE WHEN $max_depth >= 2 AND size(hop1) < $limit THEN frontier1 ELSE [] END AS f
  WITH f.n AS fn, f.rank AS rank
  CALL (fn) { MATCH (fn)-[r:RELATED_TO]-(n:Entity) RETURN r, n }
  WITH fn, rank, r, n
  WHERE r.type IN $predicates AND n.namespace = $namespace AND NOT n IN visited1
  WITH n, fn, r, rank ORDER BY rank, fn.name, r.type
  WITH n, head(collect({rank: rank, from_name: fn.name, predicate: r.type, outgoing: startNode(r) = fn})) AS via
  RETURN collect({n: n, depth: 2, via: via}) AS hop2
}
WITH hop1 + hop2 AS hits, visited1 + [h IN hop2 | h.n] AS visited2, [h IN hop2 | {n: h.n, rank: h.via.rank}] AS frontier2
// hop 3
CALL (hits, visited2, frontier2) {
  UNWIND CASE WHEN $max_depth >= 3 AND size(hits) < $limit THEN frontier2 ELSE [] END AS f
  WITH f.n AS fn, f.rank AS rank
  CALL (fn) { MATCH (fn)-[r:RELATED_TO]-(n:Entity) RETURN r, n }
  WITH fn, rank, r, n
  WHERE r.type IN $predicates AND n.namespace = $namespace AND NOT n IN visited2
  WITH n, fn, r, rank ORDER BY rank, fn.name, r.type
  WITH n, head(collect({rank: rank, from_name: fn.name, predicate: r.type, outgoing: startNode(r) = fn})) AS via
  RETURN collect({n: n, depth: 3, via: via}) AS hop3
}
UNWIND hits + hop3 AS h
WITH h ORDER BY h.depth, h.via.rank, h.n.name, h.via.from_name, h.via.predicate
LIMIT toInteger($limit)
RETURN h.n.name AS name, h.n.type AS type, h.via.predicate AS predicate, h.via.from_name AS from_name,
       h.depth AS depth, h.via.outgoing AS outgoing, h.via.rank AS rank
