// How many names the namespace has recorded, in the vocabulary or not (counted from the
// (namespace, key) index alone): an upper bound of its vocabulary, which decides whether a
// run links against the whole vocabulary read once or looks up each batch's names.
// mode: read
// params:
//   $namespace  STRING  tenant
// returns: names INTEGER
// browser: :params {namespace: 'demo'}
MATCH (n:EntityName)
WHERE n.namespace = $namespace AND n.key > ''
RETURN count(n) AS names
