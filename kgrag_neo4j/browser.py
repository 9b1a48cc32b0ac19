"""How kgrag's graph looks in Neo4j Browser.

Browser captions a node with its ``name`` or ``title`` on its own (documents have a title,
chunks, entities and communities a name or title), but a relationship only with its type:
chunk edges are all ``RELATES_TO`` and entity relationships all ``RELATED_TO``, their kind
being a property. ``BROWSER_STYLE`` captions them with that property. ``style_command()`` is
the ``:style`` line to paste into Browser; the local server runs it on every connect.
``EXPLORE`` holds statements that draw a document's chunk graph, an entity's neighbourhood and
a community (docs/cypher.md, "Explore in Browser").
"""

from __future__ import annotations

import json
from dataclasses import dataclass

__all__ = ["BROWSER_STYLE", "EXPLORE", "ExploreQuery", "style_command"]

#: Browser graph style (GraSS as JSON): only what differs from Browser's defaults
BROWSER_STYLE: dict[str, dict[str, str]] = {
    "node.Document": {"caption": "{title}", "diameter": "80px"},
    "node.Chunk": {"caption": "{name}", "diameter": "65px"},
    "node.Entity": {"caption": "{name}", "diameter": "65px"},
    "node.Community": {"caption": "{title}", "diameter": "90px"},
    "relationship.RELATES_TO": {"caption": "{relation}"},
    "relationship.RELATED_TO": {"caption": "{type}"},
}


def style_command() -> str:
    """``:style {...}`` on one line: Browser reads JSON style text as it reads GraSS."""
    return ":style " + json.dumps(BROWSER_STYLE, separators=(",", ":"))


@dataclass(frozen=True)
class ExploreQuery:
    """A statement that draws part of the graph in Browser (it returns nodes and
    relationships, which of the library's statements only cypher/graph/retrieve_graph does),
    with the ``:params`` line to run first."""

    title: str
    params: str
    statement: str


#: docs/cypher.md "Explore in Browser"; tests run each on the demo namespace
EXPLORE: tuple[ExploreQuery, ...] = (
    ExploreQuery(
        "A document's chunk graph: its chunks and their edges (sequence, similar_to, ...), also to other documents' chunks",
        ":params {namespace: 'demo', source: 'docs/retrieval.md'}",
        "MATCH (d:Document {namespace: $namespace, source: $source})-[h:HAS_CHUNK]->(c:Chunk)\n"
        "OPTIONAL MATCH (c)-[r:RELATES_TO]-(o:Chunk {namespace: $namespace})\n"
        "RETURN d, h, c, r, o",
    ),
    ExploreQuery(
        "An entity's neighbourhood: its heaviest relationships and the chunks that mention it most",
        ":params {namespace: 'demo', name_key: 'neo4j', limit: 8}",
        "MATCH (e:Entity {namespace: $namespace, name_key: $name_key})\n"
        "CALL (e) {\n"
        "  MATCH (e)-[r:RELATED_TO]-(n:Entity)\n"
        "  RETURN r, n ORDER BY r.weight DESC, n.id LIMIT toInteger($limit)\n"
        "}\n"
        "CALL (e) {\n"
        "  MATCH (c:Chunk)-[m:MENTIONS]->(e)\n"
        "  RETURN m, c ORDER BY m.count DESC, c.id LIMIT toInteger($limit)\n"
        "}\n"
        "RETURN e, r, n, m, c",
    ),
    ExploreQuery(
        "A community: the smallest one of a level, with its members and their relationships",
        ":params {namespace: 'demo', level: 0}",
        "MATCH (m:Community {namespace: $namespace})\n"
        "WHERE m.level = $level\n"
        "WITH m ORDER BY m.size, m.rank DESC, m.id LIMIT 1\n"
        "MATCH (e:Entity)-[i:IN_COMMUNITY]->(m)\n"
        "OPTIONAL MATCH (e)-[r:RELATED_TO]-(f:Entity)-[:IN_COMMUNITY]->(m)\n"
        "RETURN m, i, e, r, f",
    ),
)
