// Whether the server has the Graph Data Science Leiden procedures (the plugin is optional).
// mode: read
// params: none
// returns: available BOOLEAN
// browser: (no parameters)
SHOW PROCEDURES YIELD name
WHERE name STARTS WITH 'gds.leiden'
RETURN count(name) > 0 AS available
