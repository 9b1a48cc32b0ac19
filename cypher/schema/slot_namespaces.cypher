// Every namespace's embedding record: its model, size and vector slot, and a re-embed in
// progress (the slot it fills, or the one it still has to empty). `kgrag schema status` lists
// the namespaces of each slot from it; a slot no record names may be dropped.
// mode: read
// params: none
// returns: namespace STRING, model STRING, dimensions INTEGER, slot INTEGER, next_model STRING, next_slot INTEGER, previous_slot INTEGER
// browser: (no parameters)
MATCH (k:KgragMeta) WHERE k.key STARTS WITH 'embedding:'
RETURN k.namespace AS namespace, k.model AS model, k.dimensions AS dimensions, coalesce(k.slot, 1) AS slot,
       k.next_model AS next_model, k.next_slot AS next_slot, k.previous_slot AS previous_slot
ORDER BY namespace
