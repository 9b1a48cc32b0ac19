// Confidence propagation after a tool succeeds, in one statement: the errors the
// tool caused (error -caused_by-> tool), the errors similar to them (similar_to, either
// direction), and the learnings those similar errors are resolved by
// (similar -resolved_by-> learning). Each learning found gains $boost once (however many
// paths reach it), starting from $initial when it has no confidence yet, capped at 1.0.
// Any RELATED_TO of these types counts, whether written as a triple or by the extractor.
// Each step expands from the nodes already found inside a CALL, with the type checked
// outside it: a type predicate in the MATCH lets the planner pick the related_to_type index,
// which reads every edge of that type in every namespace.
// mode: write
// params:
//   $namespace  STRING  tenant
//   $tool_key   STRING  normalise_name of the tool node (e.g. 'tool:http_client')
//   $boost      FLOAT   confidence added to each learning (0.1 * propagation rate)
//   $initial    FLOAT   confidence of a learning that has none yet
// returns: id STRING, name STRING, type STRING, previous FLOAT, confidence FLOAT
// browser: :params {namespace: 'demo', tool_key: 'tool:http_client', boost: 0.03, initial: 0.5}
MATCH (tool:Entity {namespace: $namespace, name_key: $tool_key})
USING INDEX tool:Entity(namespace, name_key)
CALL (tool) { MATCH (error:Entity)-[c:RELATED_TO]->(tool) RETURN error, c }
WITH error WHERE c.type = 'caused_by'
CALL (error) { MATCH (error)-[x:RELATED_TO]-(similar:Entity) RETURN similar, x }
WITH similar WHERE x.type = 'similar_to'
CALL (similar) { MATCH (similar)-[y:RELATED_TO]->(learning:Entity) RETURN learning, y }
WITH learning WHERE y.type = 'resolved_by'
WITH DISTINCT learning
WITH learning, coalesce(learning.confidence, $initial) AS previous
SET learning.confidence = CASE WHEN previous + $boost > 1.0 THEN 1.0 ELSE previous + $boost END
RETURN learning.id AS id, learning.name AS name, learning.type AS type, previous,
       learning.confidence AS confidence
ORDER BY name, id
