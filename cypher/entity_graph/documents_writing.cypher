// The linked documents whose chunks may write a name (the full-text index's phrase match:
// a superset, linking decides), and those whose chunks mention the entity of a name: what
// has to be linked again when the name enters or leaves the vocabulary. One-word names come
// apart ($word_query): linking counts a one-word name only where some occurrence is
// capitalised, so only chunks that write one capitalised ($word_pattern, a regular
// expression over the words) can change, and a common word's lower-case writers are left out.
// A query whose hits came to $limit may have more: it is run again with a larger one (pages
// by skip are not stable where scores tie). `document_ids` may repeat an id.
// mode: read
// params:
//   $namespace  STRING        tenant
//   $query      STRING        Lucene query: the names' phrases and the namespace (see keyword_lucene_query); '' for none
//   $keys       LIST<STRING>  normalised names whose entities' mentions count
//   $word_query    STRING     Lucene query: one-word names and the namespace; '' for none
//   $word_pattern  STRING     a chunk of $word_query counts when its text matches this
//   $limit      INTEGER       most full-text hits read, per query
// returns: document_ids LIST<STRING>, hits INTEGER, word_hits INTEGER
// browser: :params {namespace: 'demo', query: 'content:"ned stark" AND namespace:"demo"', keys: ['ned stark'], word_query: '', word_pattern: '', limit: 100000}
CALL () {
  UNWIND CASE WHEN $query = '' THEN [] ELSE [$query] END AS q
  CALL db.index.fulltext.queryNodes('chunk_content', q, {limit: toInteger($limit)}) YIELD node
  RETURN count(node) AS hits,
         collect(DISTINCT CASE WHEN node.namespace = $namespace AND node.pair_a IS NOT NULL THEN node.document_id END) AS phrase_ids
}
CALL () {
  UNWIND CASE WHEN $word_query = '' THEN [] ELSE [$word_query] END AS q
  CALL db.index.fulltext.queryNodes('chunk_content', q, {limit: toInteger($limit)}) YIELD node
  RETURN count(node) AS word_hits,
         collect(DISTINCT CASE WHEN node.namespace = $namespace AND node.pair_a IS NOT NULL AND node.content =~ $word_pattern
                      THEN node.document_id END) AS word_ids
}
CALL () {
  UNWIND $keys AS key
  MATCH (e:Entity {namespace: $namespace, name_key: key})<-[:MENTIONS]-(c:Chunk)
  RETURN collect(DISTINCT c.document_id) AS mention_ids
}
RETURN phrase_ids + word_ids + mention_ids AS document_ids, hits, word_hits
