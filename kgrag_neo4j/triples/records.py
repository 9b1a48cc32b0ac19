"""What the triple graph hands back besides triples: expansion hits and confidence updates.

The value types live in ``kgrag_neo4j.graph_types.triples`` (the store fills them, retrieval
formats them); re-exported here for existing imports.
"""

from ..graph_types.triples import ConfidenceUpdate, ExpandedNode

__all__ = ["ConfidenceUpdate", "ExpandedNode"]
