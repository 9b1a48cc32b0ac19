// A page of the chunks a re-embed has still to embed: those of the namespace with a vector of
// the old model and none of the new one, by id after $after. Their stored content is what is
// embedded (what ingest embedded), so no file is read again.
// mode: read
// params:
//   $namespace     STRING   tenant being re-embedded
//   $old_property  STRING   the property searches read now
//   $new_property  STRING   the property the new model's vectors go to
//   $after         STRING   ids up to this one are skipped ('' = from the start)
//   $limit         INTEGER  chunks returned at most
// returns: id STRING, text STRING
// browser: :params {namespace: 'demo', old_property: 'embedding', new_property: 'embedding_2', after: '', limit: 256}
MATCH (c:Chunk {namespace: $namespace})
WHERE c.id > $after AND c[$old_property] IS NOT NULL AND c[$new_property] IS NULL
RETURN c.id AS id, c.content AS text
ORDER BY id
LIMIT toInteger($limit)
