// Write regenerated reports onto their communities (with the size they were made for) and
// clear the communities' stale mark.
// mode: write
// params:
//   $namespace  STRING     tenant
//   $rows       LIST<MAP>  [{id, props: {title, summary, full_content, rank, rating, size, reported_at}}]
// returns: written INTEGER
// browser: :params {namespace: 'demo', rows: [{id: 'com_1', props: {title: 'T', summary: 'S', full_content: 'F', rank: 1.0, rating: null, size: 2, reported_at: '2026-01-01T00:00:00+00:00'}}]}
UNWIND $rows AS row
MATCH (m:Community {id: row.id})
WHERE m.namespace = $namespace
SET m += row.props, m.stale = null
RETURN count(m) AS written
