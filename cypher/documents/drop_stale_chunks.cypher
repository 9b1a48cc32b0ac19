// After a new version of documents is written (its chunks carry its content hash), delete
// the chunks of the old versions that the new ones no longer have. Chunks whose id is
// unchanged were rewritten with the new hash, so they keep their edges and mentions.
// mode: write
// params:
//   $namespace  STRING        tenant
//   $ids        LIST<STRING>  documents just written
// returns: removed INTEGER
// browser: :params {namespace: 'demo', ids: ['doc_44baee2d8286fcbe2de5746f8d66be0f']}
UNWIND $ids AS id
MATCH (d:Document {id: id})-[:HAS_CHUNK]->(old:Chunk)
WHERE d.namespace = $namespace AND (old.document_hash IS NULL OR old.document_hash <> d.content_hash)
DETACH DELETE old
RETURN count(old) AS removed
