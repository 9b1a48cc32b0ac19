// The embedding dimensions recorded for the database, the model recorded for a namespace, and
// whether the chunk full-text index holds the namespace field.
// mode: read
// params:
//   $namespace  STRING  tenant whose embedding model to read
// returns: dimensions INTEGER, model STRING, namespace_dimensions INTEGER, chunk_text_namespaced BOOLEAN
// browser: :params {namespace: 'demo'}
OPTIONAL MATCH (s:KgragMeta {key: 'schema'})
OPTIONAL MATCH (n:KgragMeta {key: 'embedding:' + $namespace})
RETURN s.dimensions AS dimensions, n.model AS model, n.dimensions AS namespace_dimensions,
       coalesce(s.chunk_text_namespaced, false) AS chunk_text_namespaced
