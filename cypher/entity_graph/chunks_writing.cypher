// The linked chunks whose links a name entering or leaving the vocabulary may change: those
// that may write it (a phrase match of the chunk_names index, whose analyzer splits words
// wherever the gazetteer does, and more: a superset, linking decides) and those that mention
// the entity of such a name. One-word names come apart ($words): linking counts a one-word
// name only where some occurrence in the document is capitalised, so only the documents with
// a chunk writing one capitalised (the word's `pattern`, a regular expression) have their
// chunks that write it (in any case) returned, and a common word's lower-case writers
// elsewhere are left out. Each word is its own query, so a hit is matched against its one
// word's pattern (one pattern of many words costs their number at every character), and only
// a chunk containing one of the word's capitalised beginnings (`starts`) is matched. A query
// whose hits came to $limit may have more: it is run again with a larger one (pages by skip
// are not stable where scores tie). A name of which the index keeps only the words ("C--" is
// "c" there: every chunk with a lone c would be a hit) is its own query too, and only the
// hits whose lower-cased text contains it ($literals) are returned. Rows are
// [document id, chunk id], and may repeat.
// mode: read
// params:
//   $namespace  STRING        tenant
//   $query      STRING        Lucene query over chunk_names: the names' phrases (and the namespace); '' for none
//   $keys       LIST<STRING>  normalised names whose entities' mentions count
//   $words      LIST<MAP>     one-word names: [{query: a Lucene query over chunk_names, pattern: what a chunk writing it capitalised matches, starts: LIST<STRING> one of which such a chunk contains}]
//   $literals   LIST<MAP>     names the index keeps only part of: [{query: a Lucene query over chunk_names, literal: the name as the linker finds it, lower case}]
//   $limit      INTEGER       most full-text hits read, per query
// returns: chunks LIST<LIST<STRING>>, hits INTEGER, word_hits INTEGER, literal_hits INTEGER
// browser: :params {namespace: 'demo', query: 'content:("ned stark")', keys: ['ned stark'], words: [], literals: [], limit: 100000}
CALL () {
  UNWIND CASE WHEN $query = '' THEN [] ELSE [$query] END AS q
  CALL db.index.fulltext.queryNodes('chunk_names', q, {limit: toInteger($limit)}) YIELD node
  RETURN count(node) AS hits,
         collect(CASE WHEN node.namespace = $namespace AND node.pair_a IS NOT NULL THEN [node.document_id, node.id] END) AS phrase_chunks
}
CALL () {
  UNWIND $words AS w
  CALL (w) {
    CALL db.index.fulltext.queryNodes('chunk_names', w.query, {limit: toInteger($limit)}) YIELD node
    // grouped by document alone: the namespace and the linked mark are read only on the hits
    // of documents writing the word capitalised (a common word has tens of thousands of hits)
    WITH node.document_id AS document_id, collect(node) AS nodes
    WITH document_id, nodes, any(x IN nodes WHERE any(s IN w.starts WHERE x.content CONTAINS s) AND x.content =~ w.pattern) AS capitalised
    UNWIND nodes AS x
    RETURN count(x) AS word_hits_of,
           collect(CASE WHEN capitalised AND x.namespace = $namespace AND x.pair_a IS NOT NULL THEN [document_id, x.id] END) AS found
  }
  UNWIND found + [null] AS pair
  RETURN coalesce(max(word_hits_of), 0) AS word_hits, collect(pair) AS word_chunks
}
CALL () {
  UNWIND $literals AS w
  CALL (w) {
    CALL db.index.fulltext.queryNodes('chunk_names', w.query, {limit: toInteger($limit)}) YIELD node
    RETURN count(node) AS literal_hits_of,
           collect(CASE WHEN node.namespace = $namespace AND node.pair_a IS NOT NULL AND toLower(node.content) CONTAINS w.literal
                        THEN [node.document_id, node.id] END) AS found
  }
  UNWIND found + [null] AS pair
  RETURN coalesce(max(literal_hits_of), 0) AS literal_hits, collect(pair) AS literal_chunks
}
CALL () {
  UNWIND $keys AS key
  MATCH (e:Entity {namespace: $namespace, name_key: key})<-[:MENTIONS]-(c:Chunk)
  RETURN collect([c.document_id, c.id]) AS mention_chunks
}
RETURN phrase_chunks + word_chunks + literal_chunks + mention_chunks AS chunks, hits, word_hits, literal_hits
