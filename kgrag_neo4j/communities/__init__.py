"""Communities of the entity graph (Leiden, in Python) and their reports.

Pure code: the store projects the graph, calls these, and writes the results back.
"""

from .leiden import (
    Community,
    CommunityAssignment,
    community_assignments,
    community_id,
    leiden_communities,
)
from .reports import CommunityReport, extractive_report, llm_report

__all__ = [
    "Community",
    "CommunityAssignment",
    "CommunityReport",
    "community_assignments",
    "community_id",
    "extractive_report",
    "leiden_communities",
    "llm_report",
]
