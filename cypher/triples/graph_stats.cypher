// Node counts by label and relationship counts by type for one namespace: the whole graph
// kgrag keeps (documents, chunks, chunk edges, entities, triples, mentions, communities).
// Every label and type gets a row, zeros included.
// mode: read
// params:
//   $namespace  STRING  tenant
// returns: kind STRING, name STRING, count INTEGER
// browser: :params {namespace: 'demo'}
CALL () {
  RETURN 'node' AS kind, 'Document' AS name,
         COUNT { MATCH (d:Document) WHERE d.namespace = $namespace } AS count
  UNION ALL
  RETURN 'node' AS kind, 'Chunk' AS name,
         COUNT { MATCH (c:Chunk) WHERE c.namespace = $namespace } AS count
  UNION ALL
  RETURN 'node' AS kind, 'Entity' AS name,
         COUNT { MATCH (e:Entity) WHERE e.namespace = $namespace } AS count
  UNION ALL
  RETURN 'node' AS kind, 'Community' AS name,
         COUNT { MATCH (m:Community) WHERE m.namespace = $namespace } AS count
  UNION ALL
  RETURN 'edge' AS kind, 'HAS_CHUNK' AS name,
         COUNT { MATCH (d:Document)-[:HAS_CHUNK]->(:Chunk) WHERE d.namespace = $namespace } AS count
  UNION ALL
  RETURN 'edge' AS kind, 'CHILD_OF' AS name,
         COUNT { MATCH (c:Chunk)-[:CHILD_OF]->(:Chunk) WHERE c.namespace = $namespace } AS count
  UNION ALL
  RETURN 'edge' AS kind, 'RELATES_TO' AS name,
         COUNT { MATCH (c:Chunk)-[:RELATES_TO]->(:Chunk) WHERE c.namespace = $namespace } AS count
  UNION ALL
  RETURN 'edge' AS kind, 'MENTIONS' AS name,
         COUNT { MATCH (c:Chunk)-[:MENTIONS]->(:Entity) WHERE c.namespace = $namespace } AS count
  UNION ALL
  RETURN 'edge' AS kind, 'RELATED_TO' AS name,
         COUNT { MATCH (e:Entity)-[:RELATED_TO]->(:Entity) WHERE e.namespace = $namespace } AS count
  UNION ALL
  RETURN 'edge' AS kind, 'IN_COMMUNITY' AS name,
         COUNT { MATCH (e:Entity)-[:IN_COMMUNITY]->(:Community) WHERE e.namespace = $namespace } AS count
  UNION ALL
  RETURN 'edge' AS kind, 'PARENT' AS name,
         COUNT { MATCH (m:Community)-[:PARENT]->(:Community) WHERE m.namespace = $namespace } AS count
}
RETURN kind, name, count
