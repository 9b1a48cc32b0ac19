// One page of the entities that belong to no community (by id, after $after), each with its
// votes: for every RELATED_TO relationship to another entity of the namespace that has a
// community, that neighbour's finest community (lowest level, then id) and the
// relationship's weight. Memberships written in round $round are not counted, so a round
// decides from what the rounds before it placed, whatever the page size. With $previous
// (a round key), only entities next to an entity that round placed are read: nothing else
// can have gained a vote.
// mode: read
// params:
//   $namespace  STRING   tenant
//   $after      STRING   last entity id of the previous page ('' = from the start)
//   $limit      INTEGER  entities per page
//   $round      STRING   key of the current round
//   $previous   STRING   key of the round before (null = every unplaced entity)
// returns: entity_id STRING, votes LIST<LIST<ANY>>
// browser: :params {namespace: 'demo', after: '', limit: 1000, round: 'r1', previous: null}
MATCH (e:Entity)
USING INDEX e:Entity(namespace, name_key)
WHERE e.namespace = $namespace AND e.name_key IS NOT NULL AND e.id > $after
  AND NOT EXISTS { (e)-[:IN_COMMUNITY]->() }
  AND ($previous IS NULL OR EXISTS {
    MATCH (e)-[:RELATED_TO]-(:Entity)-[p:IN_COMMUNITY]->(:Community)
    WHERE p.placed_in = $previous
  })
WITH e ORDER BY e.id LIMIT toInteger($limit)
CALL (e) {
  OPTIONAL MATCH (e)-[r:RELATED_TO]-(n:Entity)
  WHERE n.namespace = $namespace AND n <> e
  CALL (n) {
    OPTIONAL MATCH (n)-[p:IN_COMMUNITY]->(c:Community)
    WHERE c.namespace = $namespace AND coalesce(p.placed_in, '') <> $round
    WITH c ORDER BY c.level, c.id LIMIT 1
    RETURN c.id AS community_id
  }
  WITH r, community_id WHERE community_id IS NOT NULL
  RETURN collect([community_id, r.weight]) AS votes
}
RETURN e.id AS entity_id, votes
