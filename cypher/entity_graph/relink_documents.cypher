// A page of the documents with chunks marked to be linked again (`relink`, see
// entity_graph/mark_relink), by id.
// mode: read
// params:
//   $namespace  STRING   tenant
//   $after      STRING   the last id of the previous page ('' for the first)
//   $limit      INTEGER  page size
// returns: id STRING
// browser: :params {namespace: 'demo', after: '', limit: 100}
MATCH (c:Chunk {relink: true})
USING INDEX c:Chunk(relink)
WHERE c.namespace = $namespace
WITH DISTINCT c.document_id AS id
WHERE id > $after
RETURN id
ORDER BY id
LIMIT toInteger($limit)
