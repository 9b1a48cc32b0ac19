"""What a graph retrieval score is made of: the terms of the blend as parts that add up to the
score, and a sentence for each (``RetrievalResult.scores`` and ``explanation`` in graph mode).
Both graph paths use it (the one statement in ``store/`` and the per-hop loop in
``retrieval/``), so they explain a result the same way."""

from __future__ import annotations

from collections.abc import Sequence

from .options import GraphOptions
from .types import ComponentScores, EdgeContext

__all__ = ["explain_graph_score", "raw_cosine"]


def raw_cosine(similarity: float) -> float:
    """Neo4j's normalised cosine ``(1 + cos) / 2`` back to the cosine in [-1, 1]."""
    return 2.0 * float(similarity) - 1.0


def explain_graph_score(
    options: GraphOptions,
    *,
    score: float,
    hop: int,
    similarity: float | None,
    seed_score: float | None = None,
    keyword_score: float | None = None,
    entity_score: float = 0.0,
    entity_names: Sequence[str] = (),
    via: EdgeContext | None = None,
) -> tuple[ComponentScores, list[str]]:
    """The parts a graph result's ``score`` is the sum of, and one sentence per part.

    The parts are the terms of the blend, so ``vector + graph + boost`` (``fused + graph``
    under ``blend="seed"`` with keyword seeds) is the score:

    - ``"propagate"``: ``vector`` = vector_weight x cosine (the raw cosine in [-1, 1], not
      the index's normalised ``(1 + cos) / 2``); ``boost`` = entity_seed_weight x sum(1 / df)
      of the query entities a seed mentions; ``graph`` = what the edge it came through added
      (for a seed another seed reaches, when that beats its own seed score: then there is no
      ``boost``).
    - ``"seed"``: ``vector`` (``fused`` with keyword seeds) = vector_weight x the seed search's
      score; ``graph`` = graph_weight for a seed, graph_weight x edge weight x hop decay for a
      chunk reached at a hop.

    ``hop`` is 0 for a seed; ``similarity`` the chunk's normalised cosine (None: unknown, read
    as 0.5 as the statement does); ``via`` the edge a chunk reached at a hop came through, or
    the edge from another seed that raised a seed. The measures (cosine, BM25, edge weight)
    are in the sentences.
    """
    vw, gw = float(options.vector_weight), float(options.graph_weight)
    lines: list[str] = []
    vector: float | None = None
    fused: float | None = None
    boost: float | None = None
    if options.blend == "propagate":
        cos = raw_cosine(0.5 if similarity is None else similarity)
        vector = vw * cos
        closeness = f"cosine {cos:.3f} with the query x vector weight {vw:g} = {vector:+.3f}"
        raised = hop == 0 and via is not None
        if hop == 0 and not raised and entity_score:
            boost = float(options.entity_weight) * float(entity_score)
        lines.append(("seed: " if hop == 0 else "") + closeness)
    elif hop == 0:
        base = float(seed_score if seed_score is not None else (similarity or 0.0))
        part = vw * base
        if options.seed_keyword_weight > 0:
            fused = part
            lines.append(f"seed: fused (vector + keyword) seed score {base:.3f} x vector weight {vw:g} = {part:+.3f}")
        else:
            vector = part
            lines.append(f"seed: vector score {base:.3f} (normalised cosine) x vector weight {vw:g} = {part:+.3f}")
    rest = float(score) - (vector or 0.0) - (fused or 0.0) - (boost or 0.0)
    graph: float | None = None
    if hop > 0 or via is not None or options.blend == "seed":
        graph = rest
    if keyword_score is not None and hop == 0:
        lines.append(f"keyword match: BM25 {float(keyword_score):.3f}")
    if entity_names:
        names = ", ".join(repr(n) for n in sorted(entity_names))
        lines.append(f"mentions {names}, named in the query" + (f": {boost:+.3f}" if boost else ""))
    if via is not None and graph is not None:
        edge = f"a {via.relation} edge (weight {via.weight:.2f})"
        if hop == 0:
            lines.append(
                f"linked from seed {via.from_chunk_id} by {edge}, which scores it higher than the search did: graph {graph:+.3f}"
            )
        else:
            lines.append(f"reached at hop {hop} from {via.from_chunk_id} by {edge}: graph {graph:+.3f}")
    elif hop == 0 and options.blend == "seed" and graph is not None:
        lines.append(f"graph weight {gw:g} for a seed: graph {graph:+.3f}")
    return ComponentScores(vector=vector, fused=fused, graph=graph, boost=boost), lines
