"""Turn results into the text an agent reads (the seed's KnowledgeTool output)."""

from __future__ import annotations

from collections.abc import Sequence

from ..types import RetrievalResult

__all__ = ["format_knowledge"]


def format_knowledge(
    results: Sequence[RetrievalResult], *, max_chars: int | None = 1200, show_scores: bool = False
) -> str:
    """Numbered results with title and source; graph-found ones carry the seed's
    ``↳ Related: "description" (relation)`` lines. Usable as a tool's return body."""
    if not results:
        return "No relevant knowledge found."
    blocks = []
    for i, r in enumerate(results, start=1):
        heading = r.title or r.source or r.document_id or r.id
        if r.source and r.title and r.source != r.title:
            heading = f"{r.title} ({r.source})"
        if show_scores:
            heading += f"  [score {r.score:.3f}]"
        content = r.content.strip()
        if max_chars is not None and len(content) > max_chars:
            content = content[: max_chars - 1].rstrip() + "…"
        lines = [f"{i}. {heading}", *("   " + line for line in content.splitlines() if line.strip())]
        for g in r.graph_context:
            description = g.description or f"from {g.from_chunk_id}"
            lines.append(f'   ↳ Related: "{description}" ({g.relation})')
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
