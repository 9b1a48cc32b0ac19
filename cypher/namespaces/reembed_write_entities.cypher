// Store the new model's vectors of a page of entities beside the old ones (a re-embed); searches
// read the namespace's own slot, so they see none of these until the switch. Idempotent: a
// vector written again is the same vector.
// mode: write
// params:
//   $namespace        STRING     tenant being re-embedded
//   $rows             LIST<MAP>  [{id, embedding: LIST<FLOAT>}]
//   $vector_property  STRING     the property of the new model's slot, e.g. 'embedding_2'
// returns: written INTEGER
// browser: :params {namespace: 'demo', rows: [], vector_property: 'embedding_2'}
UNWIND $rows AS row
MATCH (e:Entity {id: row.id})
WHERE e.namespace = $namespace
CALL db.create.setNodeVectorProperty(e, $vector_property, row.embedding)
RETURN count(*) AS written
