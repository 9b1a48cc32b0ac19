// Drop the chunk full-text index, so that schema/fulltext_indexes makes it again with the
// namespace field (an index made by an earlier version indexed the content only).
// mode: schema
// params: none
// returns: nothing
// browser: (no parameters)
DROP INDEX chunk_content IF EXISTS
