"""Turn results into the text an agent reads (the knowledge tool's output)."""

from __future__ import annotations

from collections.abc import Sequence

from ..types import RetrievalResult

__all__ = ["format_knowledge"]


def format_knowledge(
    results: Sequence[RetrievalResult],
    *,
    max_chars: int | None = 1200,
    show_scores: bool = False,
    show_ids: bool = False,
) -> str:
    """Numbered results with title and source; graph-found ones carry their
    ``↳ Related: "description" (relation)`` lines. Usable as a tool's return body.

    ``show_scores``: each heading ends with the score and the parts it adds up to, when they
    do (graph mode), and the result's explanation follows its text. ``show_ids``: each
    heading names the chunk id and each ``↳ Related`` line the id of the chunk it came from,
    ids a reader can look up (``kgrag chunks show ID``)."""
    if not results:
        return "No relevant knowledge found."
    blocks = []
    for i, r in enumerate(results, start=1):
        heading = r.title or r.source or r.document_id or r.id
        if r.source and r.title and r.source != r.title:
            heading = f"{r.title} ({r.source})"
        if show_scores:
            heading += f"  [score {r.score:.3f}{_parts(r)}]"
        if show_ids:
            heading += f"  {r.id}"
        content = r.content.strip()
        if max_chars is not None and len(content) > max_chars:
            content = content[: max_chars - 1].rstrip() + "…"
        lines = [f"{i}. {heading}", *("   " + line for line in content.splitlines() if line.strip())]
        for g in r.graph_context:
            if show_ids:
                said = f'"{g.description}" ' if g.description else ""
                lines.append(f"   ↳ Related: {said}({g.relation}, weight {g.weight:.2f}, from {g.from_chunk_id})")
            else:
                description = g.description or f"from {g.from_chunk_id}"
                lines.append(f'   ↳ Related: "{description}" ({g.relation})')
        if show_scores:
            lines.extend(f"   · {line}" for line in r.explanation)
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _parts(r: RetrievalResult) -> str:
    """`` = vector 0.41 + graph 0.15`` when the graph blend's parts make up the score."""
    parts = [(name, value) for name, value in r.scores.as_dict().items() if name in ("vector", "fused", "graph", "boost")]
    if len(parts) < 2 or r.scores.rerank is not None or r.scores.keyword is not None:
        return ""
    if abs(sum(v for _, v in parts) - r.score) > 1e-6:
        return ""
    return " = " + " + ".join(f"{name} {value:.3f}" for name, value in parts)
