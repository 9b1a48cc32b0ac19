"""How kgrag's graph looks in Neo4j Browser.

Browser captions a node with its ``name`` or ``title`` on its own (documents have a title,
chunks, entities and communities a name or title), but a relationship only with its type:
chunk edges are all ``RELATES_TO`` and entity relationships all ``RELATED_TO``, their kind
being a property. ``BROWSER_STYLE`` captions them with that property. ``style_command()`` is
the ``:style`` line to paste into Browser; the local server runs it on every connect.
"""

from __future__ import annotations

import json

__all__ = ["BROWSER_STYLE", "style_command"]

#: Browser graph style (GraSS as JSON): only what differs from Browser's defaults
BROWSER_STYLE: dict[str, dict[str, str]] = {
    "node.Document": {"caption": "{title}", "diameter": "65px"},
    "node.Chunk": {"caption": "{name}", "diameter": "45px"},
    "node.Entity": {"caption": "{name}", "diameter": "55px"},
    "node.Community": {"caption": "{title}", "diameter": "70px"},
    "relationship.RELATES_TO": {"caption": "{relation}"},
    "relationship.RELATED_TO": {"caption": "{type}"},
}


def style_command() -> str:
    """``:style {...}`` on one line: Browser reads JSON style text as it reads GraSS."""
    return ":style " + json.dumps(BROWSER_STYLE, separators=(",", ":"))
