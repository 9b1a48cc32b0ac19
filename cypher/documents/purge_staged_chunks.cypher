// Delete up to $limit chunks of a document's staging namespace: what a large document's
// interrupted write left there, or its old chunks parked when the new version was
// published. Run until it deletes nothing; each run is one small transaction.
// mode: write
// params:
//   $staging  STRING   the document's staging namespace
//   $limit    INTEGER  most chunks deleted by this run
// returns: deleted INTEGER
// browser: :params {staging: '\u001fdemo\u001fdoc_44baee2d8286fcbe2de5746f8d66be0f', limit: 1000}
MATCH (c:Chunk {namespace: $staging})
WITH c LIMIT toInteger($limit)
DETACH DELETE c
RETURN count(c) AS deleted
