// Whether the entity graph has linked any document of the namespace yet: before that, a name
// entering the vocabulary has no linked document to send back to linking (a first build).
// mode: read
// params:
//   $namespace  STRING  tenant
// returns: linked BOOLEAN
// browser: :params {namespace: 'demo'}
RETURN EXISTS {
  MATCH (d:Document)
  USING INDEX d:Document(namespace, source)
  WHERE d.namespace = $namespace AND d.source IS NOT NULL AND d.entities_hash IS NOT NULL
} AS linked
