"""Stable ids: the same input always gives the same id, so every write can be a MERGE.

Ids embed the namespace, so two namespaces holding identical documents never share a node.
"""

from __future__ import annotations

import hashlib

__all__ = ["chunk_id", "content_hash", "document_id", "edge_id"]


def _digest(*parts: str, size: int = 16) -> str:
    h = hashlib.blake2b(digest_size=size)
    for part in parts:
        data = part.encode("utf-8", "surrogatepass")
        h.update(len(data).to_bytes(8, "big"))  # length-prefixed: ("ab","c") != ("a","bc")
        h.update(data)
    return h.hexdigest()


def content_hash(text: str) -> str:
    return _digest(text, size=20)


def document_id(namespace: str, source: str) -> str:
    return "doc_" + _digest("document", namespace, source)


def chunk_id(document_id_: str, kind: str, index: int, text: str) -> str:
    """``kind`` separates parents from flat/child chunks of the same index."""
    return "chk_" + _digest("chunk", document_id_, kind, str(index), content_hash(text))


def edge_id(source_id: str, target_id: str, relation: str) -> str:
    return "edg_" + _digest("edge", source_id, target_id, relation, size=12)
