// Record dimensions (database-wide) and the model (per namespace) the first time they are seen;
// returns what is recorded afterwards, so a caller can refuse a mismatch.
// mode: write
// params:
//   $namespace   STRING   tenant the model is recorded for
//   $model       STRING   embedder name, e.g. 'wordllama-l2_supercat-256'
//   $dimensions  INTEGER  embedding length
// returns: dimensions INTEGER, model STRING, namespace_dimensions INTEGER
// browser: :params {namespace: 'demo', model: 'wordllama-l2_supercat-256', dimensions: 256}
MERGE (s:KgragMeta {key: 'schema'})
  ON CREATE SET s.dimensions = $dimensions, s.created_at = timestamp()
MERGE (n:KgragMeta {key: 'embedding:' + $namespace})
  ON CREATE SET n.model = $model, n.dimensions = $dimensions, n.namespace = $namespace,
                n.created_at = timestamp()
RETURN s.dimensions AS dimensions, n.model AS model, n.dimensions AS namespace_dimensions
