// The text of chunks, by id: the maintainer reads the chunks a full-text query found for a
// name entering or leaving the vocabulary, and keeps those that write it as the gazetteer
// finds it (the index splits words in more places).
// mode: read
// params:
//   $namespace  STRING        tenant
//   $chunk_ids  LIST<STRING>  chunks
// returns: id STRING, content STRING
// browser: :params {namespace: 'demo', chunk_ids: []}
UNWIND $chunk_ids AS id
MATCH (c:Chunk {id: id})
WHERE c.namespace = $namespace
RETURN c.id AS id, c.content AS content
