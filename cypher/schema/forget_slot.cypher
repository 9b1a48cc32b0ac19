// Forget a dropped slot's size (slot 1's on the schema record, the others' own record), so the
// slot can take vectors of another size. Only when no namespace record names the slot.
// mode: write
// params:
//   $slot  INTEGER  the slot whose indexes were dropped
// returns: forgotten BOOLEAN
// browser: :params {slot: 2}
OPTIONAL MATCH (k:KgragMeta) WHERE k.key STARTS WITH 'embedding:'
  AND $slot IN [coalesce(k.slot, 1), k.next_slot, k.previous_slot]
WITH count(k) AS users
CALL (users) {
  WITH users WHERE users = 0 AND $slot = 1
  MATCH (s:KgragMeta {key: 'schema'})
  REMOVE s.dimensions
  RETURN count(*) AS n
  UNION
  WITH users WHERE users = 0 AND $slot > 1
  MATCH (v:KgragMeta {key: 'vectors:' + $slot})
  DELETE v
  RETURN count(*) AS n
}
RETURN sum(n) > 0 AS forgotten
