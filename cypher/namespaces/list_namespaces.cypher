// Every namespace of the database with what it holds: documents, chunks (published ones: what
// a search can find), chunks staged for a large document whose write has not published them
// (in progress, or left by a write that was killed: the document's next large write, or the
// namespace's delete, removes them), entities (those of an entity build still in progress included),
// communities, triples, and the embedding model and dimensions recorded for it. A namespace
// with only a model record (a failed first ingest, or `kgrag init`) is listed too, so it can be
// seen and deleted. Counting reads every node of the labels once: an admin command, not a hot
// path.
// mode: read
// params: none
// returns: namespace STRING, documents INTEGER, chunks INTEGER, staged INTEGER, entities INTEGER, communities INTEGER, triples INTEGER, embedder STRING, dimensions INTEGER
// browser: (no parameters)
CALL () {
  MATCH (d:Document) RETURN d.namespace AS namespace, 'documents' AS kind, count(*) AS n
  UNION ALL
  // a chunk staged for a large document ('\u001f' + namespace + '\u001f' + id) counts for its
  // tenant, apart: no search sees it
  MATCH (c:Chunk)
  WITH c.namespace STARTS WITH '\u001f' AS staged, c
  RETURN CASE WHEN staged THEN split(c.namespace, '\u001f')[1] ELSE c.namespace END AS namespace,
         CASE WHEN staged THEN 'staged' ELSE 'chunks' END AS kind, count(*) AS n
  UNION ALL
  MATCH (e:Entity) RETURN coalesce(e.namespace, e.staged_namespace) AS namespace, 'entities' AS kind, count(*) AS n
  UNION ALL
  MATCH (m:Community) RETURN m.namespace AS namespace, 'communities' AS kind, count(*) AS n
  UNION ALL
  MATCH (:Entity)-[r:RELATED_TO]->(:Entity) WHERE r.origin = 'triple'
  RETURN r.namespace AS namespace, 'triples' AS kind, count(*) AS n
  UNION ALL
  MATCH (k:KgragMeta) WHERE k.key STARTS WITH 'embedding:'
  RETURN k.namespace AS namespace, 'model' AS kind, 0 AS n
}
WITH namespace, kind, n WHERE namespace IS NOT NULL
WITH namespace, collect([kind, n]) AS counts
OPTIONAL MATCH (k:KgragMeta {key: 'embedding:' + namespace})
RETURN namespace,
       coalesce([x IN counts WHERE x[0] = 'documents' | x[1]][0], 0) AS documents,
       coalesce([x IN counts WHERE x[0] = 'chunks' | x[1]][0], 0) AS chunks,
       coalesce([x IN counts WHERE x[0] = 'staged' | x[1]][0], 0) AS staged,
       coalesce([x IN counts WHERE x[0] = 'entities' | x[1]][0], 0) AS entities,
       coalesce([x IN counts WHERE x[0] = 'communities' | x[1]][0], 0) AS communities,
       coalesce([x IN counts WHERE x[0] = 'triples' | x[1]][0], 0) AS triples,
       k.model AS embedder, k.dimensions AS dimensions
ORDER BY namespace
