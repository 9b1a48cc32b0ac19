// Every index and constraint-backing index with its state; kgrag waits for ONLINE.
// mode: read
// params: none
// returns: name STRING, type STRING, state STRING, population FLOAT, labels LIST<STRING>, properties LIST<STRING>, dimensions INTEGER, hnsw_m INTEGER, hnsw_ef_construction INTEGER, quantized BOOLEAN
// browser: (no parameters)
SHOW INDEXES YIELD name, type, state, populationPercent, labelsOrTypes, properties, options
RETURN name, type, state, populationPercent AS population, labelsOrTypes AS labels, properties,
       options.indexConfig.`vector.dimensions` AS dimensions,
       // a vector index's HNSW settings: one made by an earlier kgrag keeps Neo4j's 16 and 100
       options.indexConfig.`vector.hnsw.m` AS hnsw_m, options.indexConfig.`vector.hnsw.ef_construction` AS hnsw_ef_construction,
       // kgrag creates them unquantized (exact scores); an index made quantized elsewhere says so
       options.indexConfig.`vector.quantization.enabled` AS quantized
ORDER BY name
