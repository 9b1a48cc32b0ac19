// Create or update entities by id (ids embed the namespace and the normalised name and type,
// so the same entity found in several chunks or documents lands on one node). A stored
// description is replaced only by a longer one, and the embedding travels with the
// description it was made from: it is written when the description is replaced or when the
// node has none yet. The first name recorded is kept, and so is the first source chunk while
// that chunk exists (a re-ingested document may have dropped it; then the new one is taken).
// MERGE includes the namespace: an id already used in another namespace fails the uniqueness
// constraint instead of quietly crossing tenants.
// mode: write
// params:
//   $namespace  STRING     tenant
//   $rows       LIST<MAP>  [{id, name, name_key, type, description, source_chunk_id, embedding: LIST<FLOAT>|null}]
// returns: written INTEGER
// browser: :params {namespace: 'demo', rows: [{id: 'ent_1', name: 'Ned Stark', name_key: 'ned stark', type: 'PERSON', description: 'Lord of Winterfell', source_chunk_id: null, embedding: null}]}
UNWIND $rows AS row
MERGE (e:Entity {id: row.id, namespace: $namespace})
WITH e, row,
     e.description IS NULL OR size(coalesce(row.description, '')) > size(e.description) AS replace_description
SET e.name = coalesce(e.name, row.name),
    e.name_key = row.name_key,
    e.type = row.type,
    e.source_chunk_id = CASE WHEN row.source_chunk_id IS NOT NULL
                               AND (e.source_chunk_id IS NULL OR NOT EXISTS { MATCH (:Chunk {id: e.source_chunk_id}) })
                             THEN row.source_chunk_id ELSE e.source_chunk_id END,
    e.description = CASE WHEN replace_description THEN coalesce(row.description, '') ELSE e.description END
WITH e, row, replace_description
CALL (e, row, replace_description) {
  WITH e, row, replace_description
  WHERE row.embedding IS NOT NULL AND (replace_description OR e.embedding IS NULL)
  CALL db.create.setNodeVectorProperty(e, 'embedding', row.embedding)
}
RETURN count(e) AS written
