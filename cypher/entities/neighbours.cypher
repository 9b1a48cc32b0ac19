// Entities related to the given ones, breadth-first over RELATED_TO in both directions, up to
// $max_hops (1..3, unrolled), with the relationship-type and sequence filters of entity retrieval.
// Expansion is frontier-based: each hop expands only the entities first reached at the hop
// before, so its cost grows with the frontier, not with the number of paths; entities already
// visited are dropped by grouping each hop's rows per entity (a hash join, not a list scan per
// edge), so a hub at hop 1 does not make hop 2 quadratic. An entity is
// reported at the first hop that reaches it (distance), through its best edge at that hop:
// strength = that edge's weight (ties: smaller from-entity id, then type). path lists the
// steps from a start entity: [[entity name, relation type], ...], one per hop. Start entities
// are never reported. Relationships without a sequence are timeless: $max_sequence keeps them.
// mode: read
// params:
//   $namespace       STRING        tenant
//   $ids             LIST<STRING>  start entity ids
//   $max_hops        INTEGER       hops to expand, 0..3
//   $relation_types  LIST<STRING>  relationship types to follow (null = all)
//   $max_sequence    INTEGER       follow only relationships with sequence <= this (null = all)
// returns: entity_id STRING, name STRING, distance INTEGER, strength FLOAT, path LIST<LIST<STRING>>
// browser: :params {namespace: 'demo', ids: ['ent_dfc16d04a9fa34631a36ebe4549733e0'], max_hops: 2, relation_types: null, max_sequence: null}
MATCH (q:Entity)
WHERE q.id IN $ids AND q.namespace = $namespace
WITH collect(q) AS frontier0
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
WITH hop1, frontier0 + [h IN hop1 | h.e] AS visited1
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
WITH hop1, hop2, visited1 + [h IN hop2 | h.e] AS visited2
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
UNWIND hop1 + hop2 + hop3 AS h
RETURN h.e.id AS entity_id, h.e.name AS name, h.distance AS distance, h.strength AS strength, h.path AS path
ORDER BY distance, strength DESC, entity_id
