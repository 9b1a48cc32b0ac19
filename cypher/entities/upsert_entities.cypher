// Create or update entities by id (ids embed the namespace and the normalised name and type,
// so the same entity found in several chunks or documents lands on one node). A stored
// description is replaced only by a longer one, and the embedding travels with the
// description it was made from: it is written when the description is replaced or when the
// node has none yet. The first name recorded is kept, and so is the first source chunk while
// that chunk exists (a re-ingested document may have dropped it; then the new one is taken).
// With $build (an entity build in progress) a NEW entity is staged: it carries
// staged_namespace instead of namespace, so no reader (they all test the namespace) sees it
// until entities/publish_build switches the whole build on in one transaction; an entity
// already visible is updated in place, and a staged one that a build which died left behind
// is adopted by this one. Without $build the entity is visible at once (publishing a staged
// one of the same id). An id of another namespace is left untouched and not returned, so the
// caller can refuse it (and roll back) instead of quietly crossing tenants. An entity that a
// concurrent delete (an orphan removed with its document) took while this statement ran reads
// as all-null and is listed in `vanished`: the caller runs the transaction again.
// mode: write
// params:
//   $namespace  STRING     tenant
//   $build      STRING     id of the entity build writing (null: write visible entities)
//   $rows       LIST<MAP>  [{id, name, name_key, type, description, source_chunk_id, embedding: LIST<FLOAT>|null}]
//   $vector_property  STRING  property holding the namespace's vectors (its embedding model's; `kgrag cypher params` fills it)
// returns: written INTEGER, ids LIST<STRING>, vanished LIST<STRING>
// browser: :params {namespace: 'demo', build: null, rows: [{id: 'ent_1', name: 'Ned Stark', name_key: 'ned stark', type: 'PERSON', description: 'Lord of Winterfell', source_chunk_id: null, embedding: null}], vector_property: 'embedding'}
UNWIND $rows AS row
MERGE (e:Entity {id: row.id})
  ON CREATE SET e.namespace = CASE WHEN $build IS NULL THEN $namespace END,
                e.staged_namespace = CASE WHEN $build IS NULL THEN null ELSE $namespace END
WITH e, row, e.namespace = $namespace OR e.staged_namespace = $namespace AS ours
CALL (e, row, ours) {
  WITH e, row WHERE ours
  WITH e, row,
       $build IS NOT NULL AND e.staged_namespace IS NOT NULL AS staged,
       e.description IS NULL OR size(coalesce(row.description, '')) > size(e.description) AS replace_description
  SET e.namespace = CASE WHEN staged THEN null ELSE $namespace END,
      e.staged_namespace = CASE WHEN staged THEN $namespace ELSE null END,
      e.staged_build = CASE WHEN staged THEN $build ELSE null END,
      e.name = coalesce(e.name, row.name),
      e.name_key = row.name_key,
      e.type = row.type,
      e.source_chunk_id = CASE WHEN row.source_chunk_id IS NOT NULL
                                 AND (e.source_chunk_id IS NULL OR NOT EXISTS { MATCH (:Chunk {id: e.source_chunk_id}) })
                               THEN row.source_chunk_id ELSE e.source_chunk_id END,
      e.description = CASE WHEN replace_description THEN coalesce(row.description, '') ELSE e.description END
  WITH e, row, replace_description
  WHERE row.embedding IS NOT NULL AND (replace_description OR e[$vector_property] IS NULL)
  CALL db.create.setNodeVectorProperty(e, $vector_property, row.embedding)
}
WITH e, row, ours AND e.id IS NOT NULL AS kept, e.id IS NULL AS vanished
RETURN count(CASE WHEN kept THEN 1 END) AS written,
       collect(CASE WHEN kept THEN e.id END) AS ids,
       collect(CASE WHEN vanished THEN row.id END) AS vanished
