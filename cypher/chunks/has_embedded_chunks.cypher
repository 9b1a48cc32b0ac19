// Whether the namespace holds any chunk with an embedding (a folder ingest into an empty
// namespace needs no vector-index call to find similar chunks outside its own).
// mode: read
// params:
//   $namespace  STRING  tenant
//   $vector_property  STRING  property holding the namespace's vectors (its embedding model's; `kgrag cypher params` fills it)
// returns: found BOOLEAN
// browser: :params {namespace: 'demo', vector_property: 'embedding'}
RETURN EXISTS { MATCH (c:Chunk {namespace: $namespace}) WHERE c[$vector_property] IS NOT NULL } AS found
