// A page of the entities marked `dirty` (a mention came or went, or their name's statistics
// changed; new ones are staged until then), with what the maintainer needs to bring each up to
// date: its name's forms and cue counts (type and display name), the chunks mentioning it now
// and at the last update, and its earliest mentioning chunk
// (created, document, index, id) with the offset of the first mention there: the description's
// sentence. Only the earliest chunk of those written since the last update (kept by
// entity_graph/write_links) and its current source chunk are compared, unless it lost the
// mention in either (then all of them). `touches`: how often it was marked, so that an update made from this read is refused
// if another ingest marked it meanwhile (or updated it first: its read was as current). `rechunked`: a chunk stopped mentioning it since its
// last update (entity_graph/unlink_chunks).
// mode: read
// params:
//   $namespace  STRING   tenant
//   $after      STRING   the last id of the previous page ('' for the first)
//   $limit      INTEGER  page size
//   $vector_property  STRING  property holding the namespace's vectors (its embedding model's; `kgrag cypher params` fills it)
// returns: id STRING, key STRING, name STRING, type STRING, description STRING, source_chunk_id STRING, maintained BOOLEAN, has_embedding BOOLEAN, forms LIST<STRING>, form_counts LIST<INTEGER>, stats LIST<INTEGER>, df INTEGER, old_df INTEGER, earliest MAP, touches INTEGER, rechunked BOOLEAN
// browser: :params {namespace: 'demo', after: '', limit: 500, vector_property: 'embedding'}
MATCH (e:Entity {dirty: true})
USING INDEX e:Entity(dirty)
WHERE (coalesce(e.namespace, e.staged_namespace) = $namespace) AND e.id > $after
WITH e ORDER BY e.id LIMIT toInteger($limit)
// the count of marks is read before anything it guards: a mark that lands during this read
// moves it, and the update made from the read is refused
WITH e, coalesce(e.touches, 0) AS touches
OPTIONAL MATCH (n:EntityName {namespace: $namespace, key: e.name_key})
CALL (e) {
  // the source chunk and the earliest chunk written since (`new_source`) are looked up by
  // id: an entity most chunks mention reads none of its other chunks, unless it lost one of
  // those two (then every mention is compared)
  CALL (e) {
    MATCH (e)<-[m:MENTIONS]-(c)
    WHERE e.maintained AND e.lost
    RETURN c, m
    UNION
    MATCH (c:Chunk {id: e.source_chunk_id})-[m:MENTIONS]->(e)
    WHERE e.maintained
    RETURN c, m
    UNION
    MATCH (c:Chunk {id: e.new_source})-[m:MENTIONS]->(e)
    WHERE e.maintained
    RETURN c, m
  }
  // the namespace is read on these candidates only; a chunk parked by a large write or
  // delete is passed. Only the earliest one's text is read: a fresh build compares every
  // mention of an entity most chunks mention
  WITH c, m WHERE c.namespace = $namespace
  WITH c, m ORDER BY c.created_at, c.document_id, c.chunk_index, c.id
  LIMIT 1
  RETURN collect(c {.id, .content, first: m.first})[0] AS earliest
}
RETURN e.id AS id, e.name_key AS key, e.name AS name, e.type AS type, coalesce(e.description, '') AS description,
       e.source_chunk_id AS source_chunk_id, coalesce(e.maintained, false) AS maintained,
       e[$vector_property] IS NOT NULL AS has_embedding,
       coalesce(n.forms, []) AS forms, coalesce(n.form_counts, []) AS form_counts,
       CASE WHEN n IS NULL THEN [0, 0, 0, 0, 0] ELSE [n.person, n.location, n.weak, n.occurrences, n.titles] END AS stats,
       COUNT { (e)<-[:MENTIONS]-() } AS df, coalesce(e.df, 0) AS old_df, earliest,
       touches, coalesce(e.rechunked, false) AS rechunked
ORDER BY id
