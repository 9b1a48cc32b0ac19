// A page of the chunks whose `references` edges must be computed again (`links_dirty`).
// mode: read
// params:
//   $namespace  STRING   tenant
//   $after      STRING   the last id of the previous page ('' for the first)
//   $limit      INTEGER  page size
// returns: id STRING
// browser: :params {namespace: 'demo', after: '', limit: 1000}
MATCH (c:Chunk {links_dirty: true})
USING INDEX c:Chunk(links_dirty)
WHERE c.namespace = $namespace AND c.id > $after
RETURN c.id AS id
ORDER BY id
LIMIT toInteger($limit)
