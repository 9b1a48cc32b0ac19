// Place entities that belong to no community: each joins the community the caller chose and
// every coarser community above it (PARENT), and those communities are marked stale (their
// report does not know the new member). The membership records the round that wrote it
// (`placed_in`, see communities/unplaced_votes). An entity that meanwhile went, or got a
// community, or a community that went, is skipped.
// mode: write
// params:
//   $namespace  STRING     tenant
//   $rows       LIST<MAP>  [{entity_id, community_id}]
//   $round      STRING     key of the current round
// returns: placed INTEGER, memberships INTEGER
// browser: :params {namespace: 'demo', rows: [{entity_id: 'ent_1', community_id: 'com_1'}], round: 'r1'}
UNWIND $rows AS row
MATCH (e:Entity {id: row.entity_id})
WHERE e.namespace = $namespace AND NOT EXISTS { (e)-[:IN_COMMUNITY]->() }
MATCH (c:Community {id: row.community_id})
WHERE c.namespace = $namespace
CALL (e, c) {
  MATCH (c)-[:PARENT*0..16]->(m:Community)
  WHERE m.namespace = $namespace
  MERGE (e)-[r:IN_COMMUNITY]->(m)
  SET r.placed_in = $round, m.stale = true
  RETURN count(r) AS joined
}
RETURN count(e) AS placed, sum(joined) AS memberships
