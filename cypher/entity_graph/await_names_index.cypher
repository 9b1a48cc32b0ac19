// Wait until the eventually consistent chunk_names full-text index holds every chunk
// committed so far (a scan's write does not wait for it), before looking up the chunks that
// write a name (entity_graph/chunks_writing).
// mode: read
// params: none
// returns: nothing
// browser: (no parameters)
CALL db.index.fulltext.awaitEventuallyConsistentIndexRefresh()
