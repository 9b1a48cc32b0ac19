// Every index and constraint-backing index with its state; kgrag waits for ONLINE.
// mode: read
// params: none
// returns: name STRING, type STRING, state STRING, population FLOAT, labels LIST<STRING>, properties LIST<STRING>, dimensions INTEGER
// browser: (no parameters)
SHOW INDEXES YIELD name, type, state, populationPercent, labelsOrTypes, properties, options
RETURN name, type, state, populationPercent AS population, labelsOrTypes AS labels, properties,
       options.indexConfig.`vector.dimensions` AS dimensions
ORDER BY name
