// Whether the namespace holds any chunk with an embedding (a folder ingest into an empty
// namespace needs no vector-index call to find similar chunks outside its own).
// mode: read
// params:
//   $namespace  STRING  tenant
// returns: found BOOLEAN
// browser: :params {namespace: 'demo'}
RETURN EXISTS { MATCH (c:Chunk {namespace: $namespace}) WHERE c.embedding IS NOT NULL } AS found
