// Record that the chunk full-text index holds the namespace field, so stores send
// namespace-scoped keyword queries (see schema/fulltext_indexes).
// mode: write
// params: none
// returns: updated INTEGER
// browser: (no parameters)
MATCH (s:KgragMeta {key: 'schema'})
SET s.chunk_text_namespaced = true
RETURN count(s) AS updated
