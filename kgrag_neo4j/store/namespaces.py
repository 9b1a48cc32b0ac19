"""Namespace lifecycle of Neo4jStore: what each namespace of the database holds, and deleting
one namespace completely (documents, chunks, entities, communities, triples, model record)
without touching any other."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ..errors import InputError
from ..validation import check_int
from .runner import CypherRunner

__all__ = ["NamespaceInfo", "NamespacesMixin", "NAMESPACE_DELETE_BATCH"]

#: nodes of each kind removed per transaction by ``delete_namespace``
NAMESPACE_DELETE_BATCH = 10_000


@dataclass(frozen=True, slots=True)
class NamespaceInfo:
    """One namespace and what it holds. ``embedder`` and ``dimensions`` are what its first
    write recorded (None when nothing was recorded). ``chunks`` counts what a search can find;
    ``staged`` the chunks of large documents whose write has not published them (in progress,
    or left by a write that was killed: the document's next large write, or ``delete_namespace``,
    removes them)."""

    namespace: str
    documents: int
    chunks: int
    entities: int
    communities: int
    triples: int
    embedder: str | None
    dimensions: int | None
    staged: int = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class NamespacesMixin:
    runner: CypherRunner
    namespace: str
    _model: str | None
    _config: dict[str, Any] | None
    _checked_models: set[tuple[str, int]]

    def list_namespaces(self) -> list[NamespaceInfo]:
        """Every namespace of the database (not only this store's), by name."""
        return [
            NamespaceInfo(
                namespace=r["namespace"],
                documents=int(r["documents"]),
                chunks=int(r["chunks"]),
                entities=int(r["entities"]),
                communities=int(r["communities"]),
                triples=int(r["triples"]),
                embedder=r["embedder"],
                dimensions=r["dimensions"],
                staged=int(r["staged"]),
            )
            for r in self.runner.read("namespaces/list_namespaces")
        ]

    def delete_namespace(self, *, batch_size: int = NAMESPACE_DELETE_BATCH) -> dict[str, int]:
        """Delete everything of this store's namespace: documents, chunks, entities (triples
        and relations with them), communities, and last the embedding model recorded for it,
        so the namespace can start over with any embedder. Nothing of another namespace is
        touched. Runs in transactions of at most ``batch_size`` nodes of each kind (a quarter
        of that, and so on, after one outgrew the server's transaction memory); an
        interrupted delete is finished by calling it again. Returns what was removed:
        ``{"documents", "chunks", "entities", "communities", "other", "records"}`` (all zero
        when the namespace did not exist)."""
        check_int(batch_size, "batch_size", minimum=1, error=InputError)
        total = {"documents": 0, "chunks": 0, "entities": 0, "communities": 0, "other": 0, "records": 0}
        for rows in self.runner.write_batches(
            "namespaces/delete_namespace_batch", namespace=self.namespace, batch_size=batch_size
        ):
            row = rows[0]
            for key in total:
                total[key] += int(row[key])
            if not any(int(row[k]) for k in ("documents", "chunks", "entities", "communities", "other", "relationships")):
                break
        # what this store remembered of the namespace's schema is gone with it
        self._model = None
        self._config = None
        self._checked_models = set()
        return total
