// Label `NameScanned` (the chunk_names full-text index) a page of the namespace's chunks whose
// names were counted by a version that did not label them; a page that comes back short
// records on the graph that every scanned chunk has the label (`name_scanned`). A maintainer
// runs it until then, once per graph.
// mode: write
// params:
//   $namespace  STRING   tenant
//   $limit      INTEGER  most chunks labelled
// returns: labelled INTEGER
// browser: :params {namespace: 'demo', limit: 10000}
CALL () {
  MATCH (c:Chunk {namespace: $namespace})
  WHERE c.name_keys IS NOT NULL AND NOT c:NameScanned
  WITH c LIMIT toInteger($limit)
  SET c:NameScanned
  RETURN count(c) AS labelled
}
CALL (labelled) {
  WITH 1 AS one WHERE labelled < $limit
  MATCH (k:KgragMeta {key: 'entity-graph:' + $namespace})
  SET k.name_scanned = true
}
RETURN labelled
