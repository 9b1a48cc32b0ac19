// The entities of a namespace with a given normalised name (one per type), each with its
// relationships both ways (heaviest first) and the chunks that mention it (most mentions
// first), each list cut at $limit.
// mode: read
// params:
//   $namespace  STRING   tenant
//   $name_key   STRING   normalise_name(name)
//   $limit      INTEGER  most relationships and mentions returned per entity
// returns: entity MAP, relations LIST<MAP>, mentions LIST<MAP>, mention_total INTEGER
// browser: :params {namespace: 'demo', name_key: 'neo4j', limit: 20}
MATCH (e:Entity {namespace: $namespace, name_key: $name_key})
CALL (e) {
  MATCH (e)-[r:RELATED_TO]-(o:Entity)
  WHERE o.namespace = $namespace
  WITH r, o, startNode(r) = e AS outgoing
  ORDER BY r.weight DESC, o.name, r.type
  LIMIT toInteger($limit)
  RETURN collect({other_id: o.id, other: o.name, other_type: o.type, type: r.type, weight: r.weight,
                  description: r.description, sequence: r.sequence, outgoing: outgoing}) AS relations
}
CALL (e) {
  MATCH (c:Chunk)-[m:MENTIONS]->(e)
  WHERE c.namespace = $namespace
  WITH c, m ORDER BY m.count DESC, c.id
  WITH collect({chunk_id: c.id, document_id: c.document_id, count: m.count, content: c.content}) AS found
  RETURN found[0..toInteger($limit)] AS mentions, size(found) AS mention_total
}
RETURN e {.id, .name, .type, .description, .source_chunk_id} AS entity, relations, mentions, mention_total
ORDER BY mention_total DESC, entity.type
