// Incoming RELATES_TO edges of the given chunks.
// mode: read
// params:
//   $namespace  STRING        tenant
//   $ids        LIST<STRING>  chunk ids
// returns: id STRING, source_id STRING, target_id STRING, relation STRING, weight FLOAT, description STRING, origin STRING
// browser: :params {namespace: 'demo', ids: ['chk_...']}
// Chunk ids: chunks/list_document_chunks lists a document's.
UNWIND $ids AS id
MATCH (s:Chunk)-[r:RELATES_TO]->(t:Chunk {id: id})
WHERE s.namespace = $namespace AND t.namespace = $namespace
RETURN r.id AS id, s.id AS source_id, t.id AS target_id, r.relation AS relation,
       r.weight AS weight, r.description AS description, r.origin AS origin
ORDER BY source_id, target_id, relation
