// A batch of the chunks whose `references` edges must be computed again (`links_dirty`).
// The batch is taken in index order and only then sorted: sorting every marked chunk first
// made each batch cost as much as all the marks left, quadratic in a fresh build. Which
// chunks come first does not change the edges in the end, since each chunk's picks depend
// only on its candidates.
// mode: read
// params:
//   $namespace  STRING   tenant
//   $limit      INTEGER  batch size
// returns: id STRING
// browser: :params {namespace: 'demo', limit: 1000}
MATCH (c:Chunk {links_dirty: true})
USING INDEX c:Chunk(links_dirty)
WHERE c.namespace = $namespace
WITH c LIMIT toInteger($limit)
RETURN c.id AS id
ORDER BY id
