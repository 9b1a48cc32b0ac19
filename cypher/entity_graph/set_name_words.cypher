// Give names the words of their key (see entity_graph/names_without_words); with $done,
// record on the graph that every name has them.
// mode: write
// params:
//   $namespace  STRING     tenant
//   $rows       LIST<MAP>  [{key, first, words}]
//   $done       BOOLEAN    the last page: record `name_words` on the graph
// returns: named INTEGER
// browser: :params {namespace: 'demo', rows: [], done: false}
CALL () {
  UNWIND $rows AS row
  MATCH (n:EntityName {namespace: $namespace, key: row.key})
  SET n.first = row.first, n.words = row.words
  RETURN count(n) AS named
}
CALL () {
  WITH 1 AS one WHERE $done
  MATCH (k:KgragMeta {key: 'entity-graph:' + $namespace})
  SET k.name_words = true
}
RETURN named
