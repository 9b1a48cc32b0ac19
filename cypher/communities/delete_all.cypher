// Remove every community of the namespace with its IN_COMMUNITY and PARENT relationships
// (the first step of replacing them; run in the same transaction as the writes that follow).
// mode: write
// params:
//   $namespace  STRING  tenant
// returns: deleted INTEGER
// browser: :params {namespace: 'demo'}
MATCH (m:Community {namespace: $namespace})
WITH collect(m) AS old
CALL (old) {
  UNWIND old AS m
  DETACH DELETE m
}
RETURN size(old) AS deleted
