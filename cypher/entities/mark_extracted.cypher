// Record that a model read these chunks with the extraction `key` (model and schema), once
// their entities, mentions and relations are written: the next `kgrag entities build --llm`
// with the same model and schema leaves them out (entities/extraction_chunks' $skip_key). A
// chunk whose text changes is a new chunk and is read again.
// mode: write
// params:
//   $namespace  STRING        tenant
//   $chunk_ids  LIST<STRING>  the chunks read
//   $key        STRING        the extraction key
// returns: marked INTEGER
// browser: :params {namespace: 'demo', chunk_ids: ['chk_1'], key: 'llm:0123456789abcdef'}
UNWIND $chunk_ids AS id
MATCH (c:Chunk {id: id})
WHERE c.namespace = $namespace
SET c.extracted_by = $key
RETURN count(c) AS marked
