// Whether any chunk or entity (of any namespace, recorded or not) holds a vector in a slot's
// property: a slot whose property nothing holds and no namespace names can be dropped. Stops at
// the first one found; scans every chunk and entity when there is none (an admin command).
// mode: read
// params:
//   $vector_property  STRING  the slot's property, e.g. 'embedding_2'
// returns: used BOOLEAN
// browser: :params {vector_property: 'embedding_2'}
// (a key test, not c[$vector_property]: the planner warns that a dynamic property rules out
// index lookups, and a full scan is meant here)
RETURN EXISTS { MATCH (c:Chunk) WHERE $vector_property IN keys(c) }
    OR EXISTS { MATCH (e:Entity) WHERE $vector_property IN keys(e) } AS used
