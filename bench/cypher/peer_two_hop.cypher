// The peers' graph retrieval: the `retrieval_query` given to neo4j-graphrag's
// VectorCypherRetriever and to langchain-neo4j's Neo4jVector. Both run it after their own
// vector-index call, which leaves one row per seed in `node`, `score` (top_k = 10 seeds).
// It is the 2-hop, both-directions expansion over RELATES_TO written the way these libraries
// document it: a variable-length pattern from each seed (so its cost grows with the number
// of paths), each neighbour scored with kgrag's formula (graph_weight 0.3 x weight of the
// edge into it x hop decay 0.7 / 0.5, at the first hop that reaches it), seeds scored
// 0.7 x cosine + 0.3, the best $result_k rows returned as text, score, metadata.
// params:
//   $result_k  INTEGER  rows returned
WITH collect(node) AS seed_nodes, collect({c: node, score: score}) AS seeds
CALL (seed_nodes) {
  UNWIND seed_nodes AS s
  MATCH p = (s)-[:RELATES_TO*1..2]-(n:Chunk)
  WHERE NOT n IN seed_nodes
  WITH n, length(p) AS hop, last(relationships(p)).weight AS w
  ORDER BY hop, w DESC
  WITH n, head(collect({hop: hop, w: w})) AS best
  RETURN collect({c: n, hop: best.hop,
                  score: 0.3 * best.w * CASE best.hop WHEN 1 THEN 0.7 ELSE 0.5 END}) AS hits
}
UNWIND [x IN seeds | {c: x.c, hop: 0, score: 0.7 * x.score + 0.3}] + hits AS x
WITH x ORDER BY x.score DESC, x.c.id LIMIT $result_k
RETURN x.c.content AS text, x.score AS score, {id: x.c.id, hop: x.hop} AS metadata
