"""The document reads of Neo4jStore: one document, its stored state (what an unchanged
re-ingest checks), listings and counts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import NotFoundError
from ..ids import document_id as source_document_id
from ..types import Document
from ._rows import check_limit, document_from_row
from .runner import CypherRunner

__all__ = ["DocumentReadsMixin"]

#: document ids per read of their stored state
STATE_IDS = 2_000


class DocumentReadsMixin:
    runner: CypherRunner
    namespace: str

    def get_document(self, document_id: str) -> Document:
        rows = self.runner.read("documents/get_document", namespace=self.namespace, document_id=document_id)
        if not rows:
            raise NotFoundError(f"no document {document_id!r} in namespace {self.namespace!r}")
        return document_from_row(rows[0]["document"])

    def document_state(self, document_id: str) -> str | None:
        """The stored content hash of a document of this namespace, or None (one cheap read,
        so an unchanged re-ingest costs no chunking and no embedding)."""
        rows = self.runner.read("documents/get_content_hash", namespace=self.namespace, document_id=document_id)
        if not rows or not rows[0]["owned"]:
            return None
        return rows[0]["content_hash"]

    def document_states(self, document_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """``{document id: {content_hash, chunk_count}}`` for the ids that are documents of this
        namespace, in one read (ids of other namespaces are left out like absent ones)."""
        ids = list(dict.fromkeys(document_ids))
        out: dict[str, dict[str, Any]] = {}
        for start in range(0, len(ids), STATE_IDS):
            for r in self.runner.read("documents/document_states", namespace=self.namespace, ids=ids[start : start + STATE_IDS]):
                if not r["foreign"]:
                    out[r["id"]] = {"content_hash": r["content_hash"], "chunk_count": int(r["chunk_count"])}
        return out

    def has_documents(self) -> bool:
        """Whether the namespace holds any document (one cheap read)."""
        return bool(self.runner.read("documents/has_documents", namespace=self.namespace)[0]["found"])

    def document_chunk_count(self, document_id: str) -> int:
        rows = self.runner.read("documents/get_document", namespace=self.namespace, document_id=document_id)
        return int(rows[0]["chunk_count"]) if rows else 0

    def list_documents(self, *, limit: int | None = None) -> list[Document]:
        rows = self.runner.read("documents/list_documents", namespace=self.namespace, limit=check_limit(limit))
        return [document_from_row(r["document"]) for r in rows]

    def count_documents(self) -> int:
        """How many documents the namespace holds."""
        return int(self.runner.read("namespaces/count_documents", namespace=self.namespace)[0]["documents"])

    def document_id_of_source(self, source: str) -> str:
        """The id ingest gives the document of ``source`` in this namespace (a file's
        resolved path, or the ``source`` it was given); whether one is stored is not checked."""
        return source_document_id(self.namespace, source)

    def list_documents_with_counts(self, *, limit: int | None = None) -> list[tuple[Document, int]]:
        rows = self.runner.read("documents/list_documents", namespace=self.namespace, limit=check_limit(limit))
        return [(document_from_row(r["document"]), int(r["chunk_count"])) for r in rows]
