// A page of the documents the entity graph has not linked since their last change (or all of
// them, for a rebuild), by id.
// mode: read
// params:
//   $namespace  STRING   tenant
//   $after      STRING   the last id of the previous page ('' for the first)
//   $limit      INTEGER  page size
//   $all        BOOLEAN  every document, linked or not
// returns: id STRING
// browser: :params {namespace: 'demo', after: '', limit: 100, all: false}
MATCH (d:Document)
USING INDEX d:Document(namespace, source)
WHERE d.namespace = $namespace AND d.source IS NOT NULL AND d.id > $after
  AND ($all OR d.entities_hash IS NULL OR d.entities_hash <> d.content_hash)
RETURN d.id AS id
ORDER BY id
LIMIT toInteger($limit)
