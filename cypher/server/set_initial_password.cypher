// Replace the initial password of a fresh server (run against the system database as neo4j).
// mode: write
// params:
//   $old  STRING  current password ('neo4j' on a fresh server)
//   $new  STRING  new password
// returns: nothing
// browser: :params {old: 'neo4j', new: 'a-new-password'}
ALTER CURRENT USER SET PASSWORD FROM $old TO $new
