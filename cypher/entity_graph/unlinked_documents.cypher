// How many documents (up to $limit) the namespace's entity graph has not linked since their
// last change: 0 when the namespace has no maintained entity graph. What a search in a mode
// that follows entities warns about.
// mode: read
// params:
//   $namespace  STRING   tenant
//   $limit      INTEGER  count at most this many
// returns: unlinked INTEGER
// browser: :params {namespace: 'demo', limit: 1000}
OPTIONAL MATCH (k:KgragMeta {key: 'entity-graph:' + $namespace})
CALL (k) {
  WITH k WHERE k IS NOT NULL
  MATCH (d:Document)
  USING INDEX d:Document(namespace, source)
  WHERE d.namespace = $namespace AND d.source IS NOT NULL
    AND (d.entities_hash IS NULL OR d.entities_hash <> d.content_hash)
  WITH d LIMIT toInteger($limit)
  RETURN count(d) AS unlinked
}
RETURN unlinked
