// The stored state of many documents in one read (so an ingest of a folder checks its
// content hashes in one round trip, and a re-ingest of unchanged files costs nothing more).
// An id held by a document of another namespace answers foreign = true and nothing else.
// mode: read
// params:
//   $namespace  STRING        tenant
//   $ids        LIST<STRING>  document ids
// returns: id STRING, content_hash STRING, chunk_count INTEGER, foreign BOOLEAN
// browser: :params {namespace: 'demo', ids: ['doc_44baee2d8286fcbe2de5746f8d66be0f']}
UNWIND $ids AS id
MATCH (d:Document {id: id})
WITH id, d, d.namespace = $namespace AS ours
RETURN id,
       CASE WHEN ours THEN d.content_hash END AS content_hash,
       CASE WHEN ours THEN COUNT { (d)-[:HAS_CHUNK]->() } ELSE 0 END AS chunk_count,
       NOT ours AS foreign
