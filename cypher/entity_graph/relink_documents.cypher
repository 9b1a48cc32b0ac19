// A page of the documents with chunks marked to be linked again (`relink`, see
// entity_graph/mark_relink), by id, with how many chunks each has marked (a maintainer
// links about as many chunks a transaction).
// mode: read
// params:
//   $namespace  STRING   tenant
//   $after      STRING   the last id of the previous page ('' for the first)
//   $limit      INTEGER  page size
// returns: id STRING, chunks INTEGER
// browser: :params {namespace: 'demo', after: '', limit: 100}
MATCH (c:Chunk {relink: true})
USING INDEX c:Chunk(relink)
WHERE c.namespace = $namespace
WITH c.document_id AS id, count(c) AS chunks
WHERE id > $after
RETURN id, chunks
ORDER BY id
LIMIT toInteger($limit)
