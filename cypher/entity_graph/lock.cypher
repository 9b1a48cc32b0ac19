// The first statement of every transaction that changes a namespace's maintained entity
// graph: it takes the write lock of the graph's record (by writing to it), so two ingests
// into one namespace change the graph one transaction at a time, and returns the vocabulary
// generation (it moves whenever a name enters or leaves the vocabulary; a link computed
// against an older one is computed again). No row: the namespace has no maintained graph.
// mode: write
// params:
//   $namespace  STRING  tenant
// returns: generation INTEGER
// browser: :params {namespace: 'demo'}
MATCH (k:KgragMeta {key: 'entity-graph:' + $namespace})
SET k.locks = coalesce(k.locks, 0) + 1
RETURN k.generation AS generation
