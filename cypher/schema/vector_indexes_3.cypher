// Vector slot 3: the chunk and entity vector indexes of one more embedding size, on their own
// property (embedding_3), so namespaces embedded by models of different sizes share the
// database and a namespace being re-embedded holds its old and new vectors side by side.
// Cosine and unquantized like slot 1 (schema/vector_indexes). A property cannot be a
// parameter of CREATE INDEX, hence one file per slot; kgrag picks the slot.
// mode: schema
// params:
//   $dimensions  INTEGER  length of every vector in this slot
// returns: nothing
// browser: :params {dimensions: 384}
CREATE VECTOR INDEX chunk_embedding_3 IF NOT EXISTS
FOR (c:Chunk) ON (c.embedding_3)
OPTIONS {indexConfig: {`vector.dimensions`: toInteger($dimensions), `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CREATE VECTOR INDEX entity_embedding_3 IF NOT EXISTS
FOR (e:Entity) ON (e.embedding_3)
OPTIONS {indexConfig: {`vector.dimensions`: toInteger($dimensions), `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}}
