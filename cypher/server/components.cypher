// Name, version and edition of the server; also a cheap liveness check for a database.
// mode: read
// params: none
// returns: name STRING, version STRING, edition STRING
// browser: (no parameters)
CALL dbms.components() YIELD name, versions, edition
RETURN name, versions[0] AS version, edition
