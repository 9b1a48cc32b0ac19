// Whether the namespace holds any document (a folder ingest into an empty namespace then reads
// no content hashes: nothing in it can be unchanged).
// mode: read
// params:
//   $namespace  STRING  tenant
// returns: found BOOLEAN
// browser: :params {namespace: 'demo'}
RETURN EXISTS { MATCH (d:Document {namespace: $namespace}) } AS found
