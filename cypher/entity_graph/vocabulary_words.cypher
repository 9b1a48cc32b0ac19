// The names of the namespace's vocabulary whose key starts with one of some words (words of a
// text, as keys write them: linking.text_words), with the words of their key and how the
// chunks write them: the names linking a few documents looks among. A name the gazetteer finds
// in a text writes each word of its key there; the linker keeps the names all of whose words
// the text writes, and remembers a word's names for the rest of its run.
// mode: read
// params:
//   $namespace  STRING        tenant
//   $words      LIST<STRING>  words, as keys write them
// returns: first STRING, key STRING, words LIST<STRING>, forms LIST<STRING>, form_counts LIST<INTEGER>
// browser: :params {namespace: 'demo', words: ['ned', 'winterfell']}
UNWIND $words AS word
MATCH (n:EntityName {namespace: $namespace, first: word})
WHERE n.accepted
// only the forms some chunk still writes (a deleted document's forms stay counted at 0)
RETURN word AS first, n.key AS key, n.words AS words, [i IN range(0, size(n.forms) - 1) WHERE n.given OR n.form_counts[i] > 0 | n.forms[i]] AS forms,
       [i IN range(0, size(n.forms) - 1) WHERE n.given OR n.form_counts[i] > 0 | n.form_counts[i]] AS form_counts
