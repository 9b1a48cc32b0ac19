// Empty the database between ingest runs: every node and relationship, in batches so a
// large graph never sits in one transaction. Indexes and constraints stay.
// params: none
MATCH (n)
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS
