// Create or update community nodes with their report.
// mode: write
// params:
//   $namespace  STRING     tenant
//   $rows       LIST<MAP>  [{id, props: {level, title, summary, full_content, rank, rating, size}}]
// returns: written INTEGER
// browser: :params {namespace: 'demo', rows: [{id: 'com_1', props: {level: 0, title: 'T', summary: 'S', full_content: 'F', rank: 1.0, rating: null, size: 2}}]}
UNWIND $rows AS row
MERGE (m:Community {id: row.id, namespace: $namespace})
SET m += row.props
RETURN count(m) AS written
