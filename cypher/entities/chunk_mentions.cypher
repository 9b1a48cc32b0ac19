// The entities each given chunk mentions (chunks of other namespaces are ignored).
// mode: read
// params:
//   $namespace  STRING        tenant
//   $ids        LIST<STRING>  chunk ids
// returns: chunk_id STRING, entity_ids LIST<STRING>
// browser: :params {namespace: 'demo', ids: ['chk_...']}
// Chunk ids: chunks/list_document_chunks lists a document's.
UNWIND $ids AS id
MATCH (c:Chunk {id: id})
WHERE c.namespace = $namespace
RETURN c.id AS chunk_id, [(c)-[:MENTIONS]->(e:Entity) WHERE e.namespace = $namespace | e.id] AS entity_ids
