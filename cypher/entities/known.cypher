// Id, name and type of every entity of the namespace: what an extractor is given as known
// entities, so a name found again keeps its stored type and id.
// mode: read
// params:
//   $namespace  STRING  tenant
// returns: id STRING, name STRING, type STRING
// browser: :params {namespace: 'demo'}
MATCH (e:Entity)
USING INDEX e:Entity(namespace, name_key)
WHERE e.namespace = $namespace AND e.name_key IS NOT NULL
RETURN e.id AS id, e.name AS name, e.type AS type
ORDER BY id
