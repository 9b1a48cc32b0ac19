// The names of the namespace's vocabulary whose key starts with one of some words (every word
// of a text, as keys write them: linking.text_words), with how the chunks write them: the
// names linking a few documents looks for. A name the gazetteer finds in a text writes its
// key's first word there, so these are all the names the text can hold, and few more.
// mode: read
// params:
//   $namespace  STRING        tenant
//   $words      LIST<STRING>  words, as keys write them
// returns: key STRING, forms LIST<STRING>, form_counts LIST<INTEGER>
// browser: :params {namespace: 'demo', words: ['ned', 'winterfell']}
UNWIND $words AS word
MATCH (n:EntityName {namespace: $namespace, first: word})
WHERE n.accepted
// only the forms some chunk still writes (a deleted document's forms stay counted at 0)
RETURN n.key AS key, [i IN range(0, size(n.forms) - 1) WHERE n.given OR n.form_counts[i] > 0 | n.forms[i]] AS forms,
       [i IN range(0, size(n.forms) - 1) WHERE n.given OR n.form_counts[i] > 0 | n.form_counts[i]] AS form_counts
