// How many documents the namespace holds (`kgrag docs list` says how many it did not show).
// mode: read
// params:
//   $namespace  STRING  tenant
// returns: documents INTEGER
// browser: :params {namespace: 'demo'}
MATCH (d:Document {namespace: $namespace})
RETURN count(d) AS documents
