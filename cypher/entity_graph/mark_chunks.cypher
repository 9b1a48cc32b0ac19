// Mark for new entity links (`references` edges) the chunks mentioning entities whose chunk
// count changed in a way that changes the links (see the maintainer).
// mode: write
// params:
//   $namespace   STRING        tenant
//   $entity_ids  LIST<STRING>  entities
// returns: marked INTEGER
// browser: :params {namespace: 'demo', entity_ids: []}
UNWIND $entity_ids AS id
MATCH (e:Entity {id: id})<-[:MENTIONS]-(c:Chunk)
WHERE e.namespace = $namespace AND c.namespace = $namespace AND c.links_dirty IS NULL
SET c.links_dirty = true
RETURN count(c) AS marked
