// The first statement of every transaction that changes a namespace's maintained entity
// graph: it takes the write lock of the graph's record, so two ingests into one namespace
// change the graph one transaction at a time, and returns the vocabulary generation (it moves
// whenever a name enters or leaves the vocabulary; a link computed against an older one is
// computed again). Creates the record, marking the namespace as having an entity graph, when
// $create is true.
// mode: write
// params:
//   $namespace  STRING   tenant
//   $create     BOOLEAN  create the record when there is none
// returns: generation INTEGER, exists BOOLEAN
// browser: :params {namespace: 'demo', create: false}
OPTIONAL MATCH (found:KgragMeta {key: 'entity-graph:' + $namespace})
WITH found
CALL (found) {
  WITH found WHERE found IS NULL AND $create
  MERGE (k:KgragMeta {key: 'entity-graph:' + $namespace})
    ON CREATE SET k.generation = 0, k.namespace = $namespace
  RETURN k
  UNION
  WITH found WHERE found IS NOT NULL
  RETURN found AS k
}
SET k.locked = coalesce(k.locked, 0) + 1
RETURN k.generation AS generation, true AS exists
