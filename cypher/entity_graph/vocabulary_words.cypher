// The names of the namespace's vocabulary every word of whose key is among some words (every
// word of a text, as keys write them: linking.text_words), with how the chunks write them: the
// names linking a few documents looks for. A name the gazetteer finds in a text writes each
// word of its key there, so these are all the names the text can hold, and few more. Names
// are found by their first word, the rest tested against $present.
// mode: read
// params:
//   $namespace  STRING        tenant
//   $words      LIST<STRING>  words, as keys write them
//   $present    MAP           each of $words -> true
// returns: key STRING, forms LIST<STRING>, form_counts LIST<INTEGER>
// browser: :params {namespace: 'demo', words: ['ned', 'stark'], present: {ned: true, stark: true}}
UNWIND $words AS word
MATCH (n:EntityName {namespace: $namespace, first: word})
WHERE n.accepted AND all(w IN coalesce(n.words, []) WHERE $present[w] IS NOT NULL)
// only the forms some chunk still writes (a deleted document's forms stay counted at 0)
RETURN n.key AS key, [i IN range(0, size(n.forms) - 1) WHERE n.given OR n.form_counts[i] > 0 | n.forms[i]] AS forms,
       [i IN range(0, size(n.forms) - 1) WHERE n.given OR n.form_counts[i] > 0 | n.form_counts[i]] AS form_counts
