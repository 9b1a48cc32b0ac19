"""What the triple graph hands back besides triples: expansion hits and confidence updates.

Pure value types, shared by the store (which fills them) and retrieval (which formats them),
so that retrieval never imports the store.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ConfidenceUpdate", "ExpandedNode"]


@dataclass(frozen=True, slots=True)
class ExpandedNode:
    """An entity found by graph expansion (phase 2 of Lango's graph RAG).

    ``predicate`` is the type of the edge that reached it from ``from_name`` at hop ``depth``
    (1 = a neighbour of a start entity); ``outgoing`` is True when that edge points from
    ``from_name`` to this node (``from_name -predicate-> name``), False when it points the
    other way (``name -predicate-> from_name``). ``seed`` is what the
    expansion started from: a start name, or the id of the chunk whose mention led to it.
    """

    name: str
    predicate: str
    from_name: str
    depth: int
    type: str = ""
    outgoing: bool = True
    seed: str = ""

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "type": self.type,
            "predicate": self.predicate,
            "from": self.from_name,
            "depth": self.depth,
            "outgoing": self.outgoing,
            "seed": self.seed,
        }


@dataclass(frozen=True, slots=True)
class ConfidenceUpdate:
    """One learning whose confidence a propagation raised from ``previous`` to ``confidence``."""

    id: str
    name: str
    type: str
    previous: float
    confidence: float
