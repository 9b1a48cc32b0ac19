// Drop the chunk vector and full-text indexes, so the next run starts from indexes as empty
// as its database (Lucene keeps deleted entries until it merges) and may use other
// dimensions; kgrag's init_schema creates them again.
// params: none
DROP INDEX chunk_embedding IF EXISTS;
DROP INDEX chunk_content IF EXISTS;
DROP INDEX entity_embedding IF EXISTS
