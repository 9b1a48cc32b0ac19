// Create or update community nodes with their report (a new report is not stale).
// mode: write
// params:
//   $namespace  STRING     tenant
//   $rows       LIST<MAP>  [{id, props: {level, title, summary, full_content, rank, rating, size, reported_at}}]
// returns: written INTEGER
// browser: :params {namespace: 'demo', rows: [{id: 'com_1', props: {level: 0, title: 'T', summary: 'S', full_content: 'F', rank: 1.0, rating: null, size: 2, reported_at: '2026-01-01T00:00:00+00:00'}}]}
UNWIND $rows AS row
MERGE (m:Community {id: row.id, namespace: $namespace})
SET m += row.props, m.stale = null
RETURN count(m) AS written
