// How much `kgrag communities update` has to do in a namespace: its communities, those marked
// stale (a member changed since their report was written), and the entities of the entity
// graph that belong to no community (new since the last build, or left alone by it).
// mode: read
// params:
//   $namespace  STRING  tenant
// returns: communities INTEGER, stale INTEGER, unplaced INTEGER
// browser: :params {namespace: 'demo'}
CALL () {
  MATCH (m:Community)
  USING INDEX m:Community(namespace, level)
  WHERE m.namespace = $namespace AND m.level IS NOT NULL
  RETURN count(m) AS communities, count(CASE WHEN m.stale THEN 1 END) AS stale
}
CALL () {
  MATCH (e:Entity)
  USING INDEX e:Entity(namespace, name_key)
  WHERE e.namespace = $namespace AND e.name_key IS NOT NULL AND NOT EXISTS { (e)-[:IN_COMMUNITY]->() }
  RETURN count(e) AS unplaced
}
RETURN communities, stale, unplaced
