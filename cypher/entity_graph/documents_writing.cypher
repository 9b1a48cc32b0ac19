// The linked documents whose chunks may write a name (the full-text index's phrase match:
// a superset, linking decides), and those whose chunks mention the entity of a name: what
// has to be linked again when the name enters or leaves the vocabulary. One-word names come
// apart ($word_query): linking counts a one-word name only where some occurrence is
// capitalised, so only chunks that write one capitalised ($word_pattern, a regular
// expression over the words) can change, and a common word's lower-case writers are left out.
// mode: read
// params:
//   $namespace  STRING        tenant
//   $query      STRING        Lucene query: the names' phrases and the namespace (see keyword_lucene_query); '' for none
//   $keys       LIST<STRING>  normalised names whose entities' mentions count
//   $word_query    STRING     Lucene query: one-word names and the namespace; '' for none
//   $word_pattern  STRING     a chunk of $word_query counts when its text matches this
//   $limit      INTEGER       most full-text hits read
// returns: document_id STRING
// browser: :params {namespace: 'demo', query: 'content:"ned stark" AND namespace:"demo"', keys: ['ned stark'], word_query: '', word_pattern: '', limit: 100000}
CALL () {
  UNWIND CASE WHEN $query = '' THEN [] ELSE [$query] END AS q
  CALL db.index.fulltext.queryNodes('chunk_content', q, {limit: toInteger($limit)}) YIELD node
  WITH node WHERE node.namespace = $namespace AND node.pair_a IS NOT NULL
  RETURN node.document_id AS document_id
  UNION
  UNWIND CASE WHEN $word_query = '' THEN [] ELSE [$word_query] END AS q
  CALL db.index.fulltext.queryNodes('chunk_content', q, {limit: toInteger($limit)}) YIELD node
  WITH node WHERE node.namespace = $namespace AND node.pair_a IS NOT NULL AND node.content =~ $word_pattern
  RETURN node.document_id AS document_id
  UNION
  UNWIND $keys AS key
  MATCH (e:Entity {namespace: $namespace, name_key: key})<-[:MENTIONS]-(c:Chunk)
  RETURN c.document_id AS document_id
}
RETURN DISTINCT document_id
ORDER BY document_id
