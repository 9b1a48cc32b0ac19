// Delete the namespace's chunk edges of one origin (e.g. 'entities'), so a rebuilt set
// replaces the old one instead of keeping edges whose reason is gone. Run in the same
// transaction as the writes of the new set: readers see the old set or the new one.
// mode: write
// params:
//   $namespace  STRING  tenant
//   $origin     STRING  origin of the edges to delete
// returns: deleted INTEGER
// browser: :params {namespace: 'demo', origin: 'entities'}
MATCH (c:Chunk {namespace: $namespace})-[r:RELATES_TO]->()
WHERE r.origin = $origin AND r.namespace = $namespace
DELETE r
RETURN count(r) AS deleted
