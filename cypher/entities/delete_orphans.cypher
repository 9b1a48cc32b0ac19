// Delete the entities among $entity_ids that no chunk mentions any more and no triple uses
// (after a large document's chunks were purged; a small delete does this in its own
// statement, documents/delete_document).
// mode: write
// params:
//   $namespace   STRING        tenant
//   $entity_ids  LIST<STRING>  the entities to check
// returns: deleted INTEGER
// browser: :params {namespace: 'demo', entity_ids: ['ent_1']}
UNWIND $entity_ids AS id
MATCH (e:Entity {id: id})
WHERE e.namespace = $namespace
  AND NOT EXISTS { (e)<-[:MENTIONS]-(:Chunk) }
  AND NOT EXISTS { (e)-[:RELATED_TO {origin: 'triple'}]-(:Entity) }
DETACH DELETE e
RETURN count(e) AS deleted
