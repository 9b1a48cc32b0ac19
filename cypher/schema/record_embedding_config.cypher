// Record dimensions (database-wide) and the model (per namespace) the first time they are seen;
// returns what is recorded afterwards, so a caller can refuse a mismatch. The model is recorded
// only when the dimensions agree with the database's: an embedder that is refused for its size
// must not bind the namespace to itself. A namespace recorded as 'unknown' (`kgrag init`
// without --embedder) takes the first real model written to it.
// mode: write
// params:
//   $namespace   STRING   tenant the model is recorded for
//   $model       STRING   embedder name, e.g. 'wordllama-l2_supercat-256'
//   $dimensions  INTEGER  embedding length
// returns: dimensions INTEGER, model STRING, namespace_dimensions INTEGER
// browser: :params {namespace: 'demo', model: 'wordllama-l2_supercat-256', dimensions: 256}
MERGE (s:KgragMeta {key: 'schema'})
  ON CREATE SET s.dimensions = $dimensions, s.created_at = timestamp()
WITH s
CALL (s) {
  WITH s WHERE s.dimensions = $dimensions
  MERGE (n:KgragMeta {key: 'embedding:' + $namespace})
    ON CREATE SET n.model = $model, n.dimensions = $dimensions, n.namespace = $namespace,
                  n.created_at = timestamp()
    ON MATCH SET n.model = CASE WHEN n.model = 'unknown' THEN $model ELSE n.model END
}
OPTIONAL MATCH (n:KgragMeta {key: 'embedding:' + $namespace})
RETURN s.dimensions AS dimensions, n.model AS model, n.dimensions AS namespace_dimensions
