"""Small builders shared by the entity, community, local-search and CLI tests."""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence

from kgrag_neo4j.ids import chunk_id, content_hash, document_id
from kgrag_neo4j.types import Chunk, Document
from kgrag_neo4j.types.entities import Entity, EntityMention, EntityRelation

from .conftest import TEST_DIMENSIONS


def unit(i: int, j: int | None = None, cos: float = 1.0) -> list[float]:
    """A unit vector along axis i, tilted toward axis j so its cosine with axis i is ``cos``."""
    v = [0.0] * TEST_DIMENSIONS
    v[i] = cos
    if j is not None:
        v[j] = math.sqrt(max(0.0, 1 - cos * cos))
    return v


def score_of(cos: float) -> float:
    """Neo4j's normalised vector score of a cosine."""
    return (1 + cos) / 2


class FixedEmbedder:
    """Maps known texts to fixed vectors; anything else gets axis 255."""

    name = "fixed"
    dimensions = TEST_DIMENSIONS

    def __init__(self, table: dict[str, list[float]] | None = None):
        self.table = dict(table or {})

    def embed(self, texts, *, input_type="document"):
        return [self.table.get(t, unit(TEST_DIMENSIONS - 1)) for t in texts]


class ScriptedChat:
    """A ChatProvider whose reply is a fixed text or a function of the messages."""

    def __init__(self, reply):
        self.reply = reply
        self.calls: list[list[dict[str, str]]] = []
        self._lock = threading.Lock()

    def chat(self, messages, *, json_schema=None):
        with self._lock:
            self.calls.append(list(messages))
        return self.reply(messages) if callable(self.reply) else self.reply


def put_document(
    store,
    source: str,
    texts: Sequence[str],
    *,
    embeddings: Sequence[Sequence[float] | None] | None = None,
    embedder=None,
    token_counts: Sequence[int] | None = None,
) -> tuple[str, list[str]]:
    """Store one document with one chunk per text; returns (document id, chunk ids)."""
    doc_id = document_id(store.namespace, source)
    chunks = []
    for k, text in enumerate(texts):
        if embeddings is not None:
            vector = embeddings[k]
        elif embedder is not None:
            vector = embedder.embed([text])[0]
        else:
            vector = None
        chunks.append(
            Chunk(
                id=chunk_id(doc_id, "flat", k, text),
                document_id=doc_id,
                content=text,
                chunk_index=k,
                embedding=list(vector) if vector is not None else None,
                token_count=token_counts[k] if token_counts is not None else len(text.split()),
            )
        )
    body = "\n\n".join(texts)
    store.store_document(Document(id=doc_id, source=source, title=source, content=body, content_hash=content_hash(body)), chunks)
    return doc_id, [c.id for c in chunks]


def make_entity(store, name: str, type_: str, vector=None, *, description: str = "", source_chunk_id=None) -> Entity:
    return Entity.create(
        name,
        type_,
        namespace=store.namespace,
        description=description or f"{name} is a {type_.lower()}",
        source_chunk_id=source_chunk_id,
        embedding=vector,
    )


def relate(a: Entity, b: Entity, type_: str, weight: float, *, sequence=None, description="") -> EntityRelation:
    return EntityRelation(a.id, b.id, type_, weight, description=description, sequence=sequence)


def mention(chunk: str, entity: Entity, count: int = 1) -> EntityMention:
    return EntityMention(chunk, entity.id, count)
