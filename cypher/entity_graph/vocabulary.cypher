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
// only the forms some chunk still writes (a deleted document's forms stay counted at 0)
RETURN n.key AS key, [i IN range(0, size(n.forms) - 1) WHERE n.given OR n.form_counts[i] > 0 | n.forms[i]] AS forms,
       [i IN range(0, size(n.forms) - 1) WHERE n.given OR n.form_counts[i] > 0 | n.form_counts[i]] AS form_counts
