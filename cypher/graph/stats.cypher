// Edge counts of the namespace by relation kind and origin.
// mode: read
// params:
//   $namespace  STRING  tenant
// returns: relation STRING, origin STRING, edges INTEGER, mean_weight FLOAT
// browser: :params {namespace: 'demo'}
MATCH (:Chunk {namespace: $namespace})-[r:RELATES_TO]->(:Chunk)
RETURN r.relation AS relation, r.origin AS origin, count(r) AS edges, avg(r.weight) AS mean_weight
ORDER BY edges DESC, relation
