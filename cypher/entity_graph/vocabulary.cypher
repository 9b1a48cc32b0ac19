// Which of some keys (every name a text could contain) are names of the namespace's
// vocabulary, with how the chunks write them: what linking a document looks for.
// mode: read
// params:
//   $namespace  STRING        tenant
//   $keys       LIST<STRING>  normalised names
// returns: key STRING, forms LIST<STRING>, form_counts LIST<INTEGER>
// browser: :params {namespace: 'demo', keys: ['ned stark', 'winterfell']}
UNWIND $keys AS key
MATCH (n:EntityName {namespace: $namespace, key: key})
WHERE n.accepted
RETURN n.key AS key, n.forms AS forms, n.form_counts AS form_counts
