// One page of the namespace's stale communities (a member changed since their report was
// written), by id after $after.
// mode: read
// params:
//   $namespace  STRING   tenant
//   $after      STRING   last community id of the previous page ('' = from the start)
//   $limit      INTEGER  communities per page
// returns: id STRING
// browser: :params {namespace: 'demo', after: '', limit: 20}
MATCH (m:Community)
USING INDEX m:Community(namespace, level)
WHERE m.namespace = $namespace AND m.level IS NOT NULL AND m.stale AND m.id > $after
RETURN m.id AS id
ORDER BY id
LIMIT toInteger($limit)
