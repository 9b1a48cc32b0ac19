// Documents of a namespace, newest first, without their content.
// mode: read
// params:
//   $namespace  STRING   tenant
//   $limit      INTEGER  most rows to return
// returns: document MAP, chunk_count INTEGER
// browser: :params {namespace: 'demo', limit: 50}
MATCH (d:Document {namespace: $namespace})
RETURN d {.id, .namespace, .source, .title, .content_hash, .created_at, .metadata} AS document,
       COUNT { (d)-[:HAS_CHUNK]->() } AS chunk_count
ORDER BY d.created_at DESC, d.id
LIMIT toInteger($limit)
