// One chunk with what surrounds it (`kgrag chunks show`): its content, its document, its
// RELATES_TO edges both ways (relation, weight, origin, description and the chunk at the other
// end) and the entities it mentions. $id is a chunk id or its first characters (an id a search
// printed, whole or cut short): the chunk is returned when one chunk of the namespace starts
// with it; `matches` holds the ids found (at most 2), so a short one that fits several says so.
// mode: read
// params:
//   $namespace  STRING  tenant
//   $id         STRING  chunk id, or its first characters
// returns: matches LIST<STRING>, chunk MAP, document MAP, outgoing LIST<MAP>, incoming LIST<MAP>, entities LIST<MAP>
// browser: :params {namespace: 'demo', id: 'chk_'}
// Chunk ids: `kgrag search` prints them; chunks/list_document_chunks lists a document's.
OPTIONAL MATCH (c:Chunk)
WHERE c.id STARTS WITH $id AND c.namespace = $namespace
// ids have one length, so a whole id matches its chunk alone
WITH c LIMIT 2
WITH collect(c) AS found
WITH found, CASE WHEN size(found) = 1 THEN found[0] END AS c
CALL (c) {
  OPTIONAL MATCH (d:Document)-[:HAS_CHUNK]->(c)
  WHERE d.namespace = $namespace
  RETURN d {.id, .source, .title} AS document
  LIMIT 1
}
CALL (c) {
  OPTIONAL MATCH (c)-[r:RELATES_TO]->(o)
  WHERE o.namespace = $namespace
  WITH r, o ORDER BY r.weight DESC, o.id, r.relation
  RETURN collect(CASE WHEN r IS NOT NULL THEN {chunk_id: o.id, relation: r.relation, weight: r.weight, origin: r.origin,
                 description: r.description, title: o.document_title, chunk_index: o.chunk_index} END) AS outgoing
}
CALL (c) {
  OPTIONAL MATCH (c)<-[r:RELATES_TO]-(o)
  WHERE o.namespace = $namespace
  WITH r, o ORDER BY r.weight DESC, o.id, r.relation
  RETURN collect(CASE WHEN r IS NOT NULL THEN {chunk_id: o.id, relation: r.relation, weight: r.weight, origin: r.origin,
                 description: r.description, title: o.document_title, chunk_index: o.chunk_index} END) AS incoming
}
CALL (c) {
  OPTIONAL MATCH (c)-[m:MENTIONS]->(e:Entity)
  WHERE e.namespace = $namespace
  WITH m, e ORDER BY e.name, e.id
  RETURN collect(CASE WHEN e IS NOT NULL THEN {id: e.id, name: e.name, type: e.type, count: m.count} END) AS entities
}
RETURN [x IN found | x.id] AS matches,
       c {.id, .document_id, .content, .chunk_index, .parent_id, .token_count, .source, .created_at, .metadata} AS chunk,
       document, outgoing, incoming, entities
