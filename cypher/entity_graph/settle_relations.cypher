// Give a batch of CO_OCCURS relationships marked `changed` their weight s / (s + 1) (s: the
// summed closeness of the sentences the two entities share, kept in millionths) and their
// description; the maintainer repeats it until none is left. The writes that change a
// strength or a name set these themselves; the marks are those an older version left.
// mode: write
// params:
//   $namespace  STRING   tenant
//   $limit      INTEGER  relationships per transaction
// returns: settled INTEGER
// browser: :params {namespace: 'demo', limit: 5000}
MATCH (a:Entity)-[r:RELATED_TO {changed: true}]->(b:Entity)
WHERE r.namespace = $namespace
WITH a, r, b LIMIT toInteger($limit)
WITH a, r, b, toFloat(r.strength) / 1000000.0 AS s
SET r.weight = s / (s + 1.0),
    r.description = a.name + ' and ' + b.name + ' appear together in ' + toString(r.windows) + ' sentence'
                    + CASE WHEN r.windows = 1 THEN '' ELSE 's' END,
    r.metadata = '{"count": ' + toString(r.windows) + ', "window": "sentence"}',
    r.changed = null
RETURN count(r) AS settled
