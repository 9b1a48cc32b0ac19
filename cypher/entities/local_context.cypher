// The whole local-search context (GraphRAG local search) in one round trip:
//   entities:       the $entity_k entities whose description embedding is nearest the query
//                   (exact scan when the index leaves fewer in the namespace);
//   text_units:     the chunks mentioning them (that pass the filters, and score at least
//                   $min_similarity when it is > 0), ranked by the cosine of their stored
//                   embedding to the query (chunks without one last), taken in that order
//                   while the running token total stays within $max_tokens and fewer than
//                   $unit_k are taken: the first unit that would exceed the budget stops the
//                   selection (as in GraphRAG);
//   relationships:  RELATED_TO relationships touching those entities, heaviest first (ties:
//                   both ends among the entities first), at most $relationship_k;
//   reports:        the communities those entities belong to, highest rank first (ties: more
//                   of the entities, then lower level), at most $report_k; `stale` says a
//                   member changed since the report was written.
// With filters ($filtered), entities count only if a chunk passing them mentions them.
// Scores and similarities are Neo4j's normalised cosine, (1 + cos) / 2.
// mode: read
// params:
//   $namespace       STRING       tenant
//   $embedding       LIST<FLOAT>  query vector
//   $entity_k        INTEGER      entities to start from
//   $entity_fetch_k  INTEGER      candidates asked of the entity index before the namespace filter
//   $max_tokens      INTEGER      token budget of the text units
//   $unit_k          INTEGER      text units returned at most
//   $min_similarity  FLOAT        text units scoring below this are left out (0 = none)
//   $filter          MAP          {document_ids, source_prefix, meta_pairs, created_after, created_before}
//   $filtered        BOOLEAN      whether $filter restricts anything
//   $relationship_k  INTEGER      relationships returned at most
//   $report_k        INTEGER      community reports returned at most
//   $vector_property  STRING  property holding the namespace's vectors (its embedding model's; `kgrag cypher params` fills it)
//   $entity_index  STRING  the entity vector index of the namespace's embedding model
// returns: entities LIST<MAP>, text_units LIST<MAP>, candidate_units INTEGER, relationships LIST<MAP>, reports LIST<MAP>
// browser: :params {namespace: 'demo', embedding: [], entity_k: 10, entity_fetch_k: 100, max_tokens: 4000, unit_k: 10, min_similarity: 0.0, filter: {document_ids: null, source_prefix: null, meta_pairs: [], created_after: null, created_before: null}, filtered: false, relationship_k: 20, report_k: 3, vector_property: 'embedding', entity_index: 'entity_embedding'}
// In Browser the query vector comes from the namespace's embedder: `kgrag cypher params entities/local_context --namespace demo --query "..."` prints this line with it.
// Filters ($filter) in Browser: document_ids (list or null), source_prefix (text or null), meta_pairs
// (['key␟value', ...]: key, U+241F, value; values that are not text as JSON), created_after and
// created_before (epoch seconds or null); `kgrag cypher params entities/local_context --filter meta.KEY=VALUE` writes them.
CALL db.index.vector.queryNodes($entity_index, toInteger($entity_fetch_k), $embedding) YIELD node, score
WITH node AS e, score
WHERE e.namespace = $namespace
  AND (NOT $filtered OR EXISTS {
    MATCH (c:Chunk)-[:MENTIONS]->(e)
    WHERE c.namespace = $namespace
      AND ($filter.document_ids IS NULL OR c.document_id IN $filter.document_ids)
      AND ($filter.source_prefix IS NULL OR c.source STARTS WITH $filter.source_prefix)
      AND all(p IN $filter.meta_pairs WHERE p IN coalesce(c.meta_pairs, []))
      AND ($filter.created_after IS NULL OR c.created_at > $filter.created_after)
      AND ($filter.created_before IS NULL OR c.created_at < $filter.created_before)
  })
WITH e, score ORDER BY score DESC, e.id LIMIT toInteger($entity_k)
WITH collect({e: e, score: score}) AS hits
CALL (hits) {
  UNWIND CASE WHEN size(hits) >= $entity_k THEN hits ELSE [] END AS h
  RETURN h.e AS e, h.score AS score
  UNION
  UNWIND CASE WHEN size(hits) < $entity_k THEN [1] ELSE [] END AS exact
  MATCH (e:Entity)
  USING INDEX e:Entity(namespace, name_key)
  WHERE e.namespace = $namespace AND e.name_key IS NOT NULL AND e[$vector_property] IS NOT NULL
    AND (NOT $filtered OR EXISTS {
      MATCH (c:Chunk)-[:MENTIONS]->(e)
      WHERE c.namespace = $namespace
        AND ($filter.document_ids IS NULL OR c.document_id IN $filter.document_ids)
        AND ($filter.source_prefix IS NULL OR c.source STARTS WITH $filter.source_prefix)
        AND all(p IN $filter.meta_pairs WHERE p IN coalesce(c.meta_pairs, []))
        AND ($filter.created_after IS NULL OR c.created_at > $filter.created_after)
        AND ($filter.created_before IS NULL OR c.created_at < $filter.created_before)
    })
  WITH e, vector.similarity.cosine(e[$vector_property], $embedding) AS score
  ORDER BY score DESC, e.id LIMIT toInteger($entity_k)
  RETURN e, score
}
WITH e, score ORDER BY score DESC, e.id
WITH collect({e: e, score: score}) AS found
WITH found, [x IN found | x.e] AS ents
CALL (ents) {
  UNWIND ents AS e
  MATCH (c:Chunk)-[:MENTIONS]->(e)
  WHERE c.namespace = $namespace
    AND ($filter.document_ids IS NULL OR c.document_id IN $filter.document_ids)
    AND ($filter.source_prefix IS NULL OR c.source STARTS WITH $filter.source_prefix)
    AND all(p IN $filter.meta_pairs WHERE p IN coalesce(c.meta_pairs, []))
    AND ($filter.created_after IS NULL OR c.created_at > $filter.created_after)
    AND ($filter.created_before IS NULL OR c.created_at < $filter.created_before)
  WITH DISTINCT c
  WITH c, CASE WHEN c[$vector_property] IS NULL THEN null
               ELSE vector.similarity.cosine(c[$vector_property], $embedding) END AS similarity
  WHERE $min_similarity <= 0 OR similarity >= $min_similarity
  ORDER BY coalesce(similarity, -1.0) DESC, c.id
  WITH collect({id: c.id, document_id: c.document_id, source: c.source, chunk_index: c.chunk_index,
                parent_id: c.parent_id, metadata: c.metadata, content: c.content,
                token_count: coalesce(c.token_count, 0), similarity: similarity, title: c.document_title,
                entity_ids: [(c)-[:MENTIONS]->(m:Entity) WHERE m IN ents | m.id]}) AS units
  WITH units, reduce(acc = {total: 0, taken: [], full: false}, u IN units |
         CASE WHEN acc.full OR acc.total + u.token_count > $max_tokens OR size(acc.taken) >= $unit_k
              THEN {total: acc.total, taken: acc.taken, full: true}
              ELSE {total: acc.total + u.token_count, taken: acc.taken + [u], full: false} END) AS acc
  RETURN acc.taken AS text_units, size(units) AS candidate_units
}
CALL (ents) {
  UNWIND ents AS e
  MATCH (e)-[r:RELATED_TO]-(o:Entity)
  WHERE o.namespace = $namespace
  WITH DISTINCT r
  WITH r, startNode(r) AS a, endNode(r) AS b
  WITH r, a, b, a IN ents AND b IN ents AS internal
  ORDER BY r.weight DESC, internal DESC, a.id, b.id, r.type
  LIMIT toInteger($relationship_k)
  RETURN collect({source_id: a.id, source: a.name, target_id: b.id, target: b.name, type: r.type,
                  weight: r.weight, description: r.description, sequence: r.sequence,
                  internal: internal}) AS relationships
}
CALL (ents) {
  UNWIND ents AS e
  MATCH (e)-[:IN_COMMUNITY]->(m:Community)
  WHERE m.namespace = $namespace
  WITH m, count(DISTINCT e) AS matched
  ORDER BY m.rank DESC, matched DESC, m.level, m.id
  LIMIT toInteger($report_k)
  RETURN collect({id: m.id, level: m.level, title: m.title, summary: m.summary,
                  full_content: m.full_content, rank: m.rank, size: m.size, matched: matched,
                  stale: coalesce(m.stale, false)}) AS reports
}
RETURN [x IN found | {id: x.e.id, name: x.e.name, type: x.e.type, description: x.e.description,
                      score: x.score}] AS entities,
       text_units, candidate_units, relationships, reports
