// A page of the entities a re-embed has still to embed: those of the namespace with a vector
// of the old model and none of the new one, by id after $after, with the name and description
// their vector is made from.
// mode: read
// params:
//   $namespace     STRING   tenant being re-embedded
//   $old_property  STRING   the property searches read now
//   $new_property  STRING   the property the new model's vectors go to
//   $after         STRING   ids up to this one are skipped ('' = from the start)
//   $limit         INTEGER  entities returned at most
// returns: id STRING, name STRING, description STRING
// browser: :params {namespace: 'demo', old_property: 'embedding', new_property: 'embedding_2', after: '', limit: 256}
MATCH (e:Entity) USING INDEX e:Entity(namespace, name_key)
WHERE e.namespace = $namespace AND e.name_key IS NOT NULL AND e.id > $after AND e[$old_property] IS NOT NULL AND e[$new_property] IS NULL
RETURN e.id AS id, e.name AS name, e.description AS description
ORDER BY id
LIMIT toInteger($limit)
