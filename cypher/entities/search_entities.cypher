// Vector search over the entity embeddings (their descriptions) of one namespace. The index
// is asked for $fetch_k candidates; when fewer than $top_k of them belong to the namespace,
// an exact cosine scan over the namespace's entities answers instead, in the same round trip.
// Scores are Neo4j's normalised cosine, (1 + cos) / 2, in [0, 1].
// mode: read
// params:
//   $namespace  STRING       tenant
//   $embedding  LIST<FLOAT>  query vector (length = index dimensions)
//   $top_k      INTEGER      entities wanted
//   $fetch_k    INTEGER      candidates asked of the vector index (>= top_k)
//   $vector_property  STRING  property holding the namespace's vectors (its embedding model's; `kgrag cypher params` fills it)
//   $entity_index  STRING  the entity vector index of the namespace's embedding model
// returns: entity MAP, score FLOAT
// browser: :params {namespace: 'demo', embedding: [], top_k: 5, fetch_k: 50, vector_property: 'embedding', entity_index: 'entity_embedding'}
// In Browser the query vector comes from the namespace's embedder: `kgrag cypher params entities/search_entities --namespace demo --query "..."` prints this line with it.
CALL db.index.vector.queryNodes($entity_index, toInteger($fetch_k), $embedding) YIELD node, score
WITH node AS e, score
WHERE e.namespace = $namespace
WITH e, score ORDER BY score DESC, e.id LIMIT toInteger($top_k)
WITH collect({e: e, score: score}) AS hits
CALL (hits) {
  UNWIND CASE WHEN size(hits) >= $top_k THEN hits ELSE [] END AS h
  RETURN h.e AS e, h.score AS score
  UNION
  UNWIND CASE WHEN size(hits) < $top_k THEN [1] ELSE [] END AS exact
  MATCH (e:Entity)
  USING INDEX e:Entity(namespace, name_key)
  WHERE e.namespace = $namespace AND e.name_key IS NOT NULL AND e[$vector_property] IS NOT NULL
  WITH e, vector.similarity.cosine(e[$vector_property], $embedding) AS score
  ORDER BY score DESC, e.id LIMIT toInteger($top_k)
  RETURN e, score
}
RETURN e {.id, .name, .type, .description, .source_chunk_id} AS entity, score
ORDER BY score DESC, entity.id
