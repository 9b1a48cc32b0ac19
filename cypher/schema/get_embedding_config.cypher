// The embedding dimensions recorded for the database and the model recorded for a namespace.
// mode: read
// params:
//   $namespace  STRING  tenant whose embedding model to read
// returns: dimensions INTEGER, model STRING, namespace_dimensions INTEGER
// browser: :params {namespace: 'demo'}
OPTIONAL MATCH (s:KgragMeta {key: 'schema'})
OPTIONAL MATCH (n:KgragMeta {key: 'embedding:' + $namespace})
RETURN s.dimensions AS dimensions, n.model AS model, n.dimensions AS namespace_dimensions
