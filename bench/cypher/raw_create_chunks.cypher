// The ingest ceiling: one UNWIND ... CREATE of the same chunk properties kgrag writes, with
// the embedding set as a float32 vector property (as kgrag and both peers do). It runs on
// the same schema as kgrag (id constraint, namespace and document indexes, full-text and
// vector indexes), so the index maintenance is the same; it skips kgrag's document node,
// HAS_CHUNK links, MERGE (idempotence) and input checks.
// params:
//   $rows  LIST<MAP>  [{id, props: {namespace, document_id, content, chunk_index, ...}, embedding}]
UNWIND $rows AS row
CREATE (c:Chunk {id: row.id})
SET c += row.props
WITH c, row
CALL db.create.setNodeVectorProperty(c, 'embedding', row.embedding)
RETURN count(c) AS written
