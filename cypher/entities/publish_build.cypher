// The one visible switch of an entity build: the entities it staged (see
// entities/upsert_entities) become entities of the namespace, with the mentions and relations
// the build wrote to them, in ONE transaction. Until then no reader sees them, so a build that
// dies half-way leaves nothing half-built in sight; the next build adopts and publishes them.
// mode: write
// params:
//   $namespace  STRING  tenant
//   $build      STRING  id of the build that staged them
// returns: published INTEGER
// browser: :params {namespace: 'demo', build: 'b1'}
MATCH (e:Entity {staged_namespace: $namespace})
WHERE e.staged_build = $build
SET e.namespace = $namespace, e.staged_namespace = null, e.staged_build = null
RETURN count(e) AS published
