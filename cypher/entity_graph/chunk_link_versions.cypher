// Inside a write of chunks' entity links as the difference from what they hold: each chunk's
// count of link writes now (`links_written`), to check that no other write changed the
// links the difference was taken from since they were read (another ingest): the write is
// then computed again.
// mode: read
// params:
//   $namespace  STRING        tenant
//   $chunk_ids  LIST<STRING>  chunks
// returns: id STRING, links_written INTEGER
// browser: :params {namespace: 'demo', chunk_ids: ['doc_44baee2d8286fcbe2de5746f8d66be0f-0']}
UNWIND $chunk_ids AS id
MATCH (c:Chunk {id: id})
WHERE c.namespace = $namespace
RETURN c.id AS id, coalesce(c.links_written, 0) AS links_written
