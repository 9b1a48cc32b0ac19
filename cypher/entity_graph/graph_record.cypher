// The record of a namespace's maintained entity graph: its vocabulary generation, and whether
// every name carries the words of its key (`name_words`: a graph made before names did
// has them added once, entity_graph/names_without_words), and whether every scanned chunk is
// labelled for the chunk_names index (`name_scanned`: entity_graph/label_scanned labels those
// of an older graph once). No row: no maintained graph.
// mode: read
// params:
//   $namespace  STRING  tenant
// returns: generation INTEGER, name_words BOOLEAN, name_scanned BOOLEAN
// browser: :params {namespace: 'demo'}
MATCH (k:KgragMeta {key: 'entity-graph:' + $namespace})
RETURN k.generation AS generation, coalesce(k.name_words, false) AS name_words,
       coalesce(k.name_scanned, false) AS name_scanned
