// Drop the two vector indexes of a slot no namespace uses any more (`kgrag schema drop-unused`),
// which frees the slot for another embedding size. The names come from kgrag's slot allow-list.
// mode: schema
// params:
//   $chunk_index   STRING  the slot's chunk vector index
//   $entity_index  STRING  the slot's entity vector index
// returns: nothing
// browser: :params {chunk_index: 'chunk_embedding_2', entity_index: 'entity_embedding_2'}
DROP INDEX $chunk_index IF EXISTS;
DROP INDEX $entity_index IF EXISTS
