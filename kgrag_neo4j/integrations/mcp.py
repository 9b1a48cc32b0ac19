"""An MCP server over one namespace (extra ``mcp``), run by ``kgrag mcp`` on stdio.

Tools, all scoped to the namespace the server was started with (a client cannot name
another one):

| tool | does |
|---|---|
| ``search_<mode>(query, top_k=5)`` | one per retrieval mode (vector, hybrid, graph, ...): results with ids, source, scores and graph context, plus the text an agent reads |
| ``ingest_text(text, source, title="")`` | ingest text as a document (idempotent per source) |
| ``ingest_path(path)`` | ingest a file or a folder, only under the allowed roots (default: the server's working directory) |
| ``list_documents(limit=50)`` | the namespace's documents, newest first |

Built on the SDK's high-level server (``MCPServer`` in mcp 2, ``FastMCP`` in mcp 1). Nothing
but the protocol is written to stdout.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError, InputError, KgragError
from ..protocols import Store
from ..retrieval.format import format_knowledge
from ..retrieval.steps import retrieve_async
from ..validation import check_int

__all__ = ["build_server", "serve_stdio"]

INSTRUCTIONS = (
    "kgrag: a Neo4j knowledge graph of documents, chunks and entities. Use the search_* tools to "
    "find passages (search_hybrid is a good default; search_graph follows links between passages), "
    "ingest_text / ingest_path to add knowledge, list_documents to see what is there."
)

MODE_DESCRIPTIONS: Mapping[str, str] = {
    "vector": "semantic (embedding) search over the passages",
    "hybrid": "semantic and keyword search fused (a good default)",
    "graph": "seeds from semantic search, expanded along the links between passages (multi-hop questions)",
    "entity": "passages about the entities the query names, boosted by the entity graph",
    "local": "entity-centred local search: entities, their passages, relationships and community reports",
    "ppr": "personalised PageRank over the entity graph from the query's entities (multi-hop questions)",
}


def _sdk() -> tuple[Any, type[Exception]]:
    """The server class and the error whose message reaches the client, in mcp 2 or mcp 1."""
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import ToolError
    except ImportError:
        pass
    else:
        return MCPServer, ToolError
    try:
        from mcp.server.fastmcp import FastMCP  # type: ignore[attr-defined, unused-ignore]  # mcp 1.x only; mypy sees whichever mcp is installed (2.x dropped FastMCP)
        from mcp.server.fastmcp.exceptions import ToolError as FastMCPToolError
    except ImportError as exc:
        raise ConfigurationError('the MCP server needs the mcp package: pip install "kgrag-neo4j[mcp]"') from exc
    return FastMCP, FastMCPToolError


def _inside(path: Path, roots: Sequence[Path]) -> bool:
    return any(path == root or root in path.parents for root in roots)


def build_server(
    *,
    namespace: str,
    store: Store,
    retrievers: Mapping[str, Any],
    ingestor: Any,
    allowed_roots: Sequence[str | os.PathLike[str]] = (),
    name: str = "kgrag",
) -> Any:
    """An MCP server whose tools use ``retrievers`` (mode -> retriever), ``ingestor`` and
    ``store``, all built for ``namespace``. ``allowed_roots``: folders ``ingest_path`` may read
    (default: the current directory)."""
    roots = [Path(r).resolve() for r in (allowed_roots or [os.getcwd()])]
    server_class, ToolError = _sdk()
    server = server_class(name, instructions=INSTRUCTIONS + f" Namespace: {namespace}.")

    def run(fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except KgragError as exc:
            # an error result whose one line the client (and its model) can read
            raise ToolError(f"{type(exc).__name__}: {exc}") from None

    for mode, retriever in retrievers.items():

        async def search(query: str, top_k: int = 5, _retriever: Any = retriever, _mode: str = mode) -> dict[str, Any]:
            try:
                check_int(top_k, "top_k", minimum=1, maximum=100, error=InputError)
            except InputError as exc:
                raise ToolError(f"InputError: {exc}") from None
            try:  # the store's async reads: the server keeps answering while this one waits
                results = await retrieve_async(_retriever, query, top_k)
            except KgragError as exc:
                raise ToolError(f"{type(exc).__name__}: {exc}") from None
            return {
                "mode": _mode,
                "namespace": namespace,
                "results": [r.to_json() for r in results],
                "text": format_knowledge(results),
            }

        server.add_tool(
            _without_private(search),
            name=f"search_{mode}",
            description=f"Search the knowledge graph: {MODE_DESCRIPTIONS.get(mode, mode)}. Returns the top_k passages.",
        )

    # writes and file reading run in a worker thread: the loop keeps serving other requests
    async def ingest_text(text: str, source: str, title: str = "") -> dict[str, Any]:
        """Add text as a document named by source (re-adding the same source replaces it; the
        same content changes nothing)."""
        r = await asyncio.to_thread(run, ingestor.ingest_text, text, source=source, title=title)
        return {"document_id": r.document_id, "status": r.status, "chunks": r.chunk_count, "edges": r.edge_count}

    async def ingest_path(path: str) -> dict[str, Any]:
        """Add a file, or every supported file under a folder (Markdown, text, HTML, PDF, ...)."""
        return await asyncio.to_thread(ingest_path_now, path)

    def ingest_path_now(path: str) -> dict[str, Any]:
        target = Path(path).expanduser().resolve()
        if not _inside(target, roots):
            raise ToolError(f"InputError: {path} is outside the folders this server may read: {', '.join(map(str, roots))}")
        # as `kgrag ingest` runs it: regular files only, symlinks leading out of the folder
        # skipped (and recorded), the run stopped when the database is gone
        tally = run(ingestor.ingest_run, [str(target)])
        failed = tally.counts["failed"] + tally.counts["not_attempted"]
        return {"files": tally.rows, "failed": failed, "stopped": tally.stopped}

    async def list_documents(limit: int = 50) -> dict[str, Any]:
        """The documents of the namespace, newest first."""
        docs = await asyncio.to_thread(run, store.list_documents, limit=max(1, min(limit, 1000)))
        return {
            "namespace": namespace,
            "documents": [{"id": d.id, "source": d.source, "title": d.title, "created_at": d.created_at} for d in docs],
        }

    for fn in (ingest_text, ingest_path, list_documents):
        server.add_tool(fn, name=fn.__name__, description=(fn.__doc__ or "").strip().replace("\n        ", " "))
    return server


def _without_private(fn: Any) -> Any:
    """The tool schema comes from the signature: hide the ``_``-prefixed closure defaults."""
    import functools
    import inspect

    signature = inspect.signature(fn)
    public = [p for name, p in signature.parameters.items() if not name.startswith("_")]

    @functools.wraps(fn)
    async def tool(query: str, top_k: int = 5) -> dict[str, Any]:
        return await fn(query, top_k)

    tool.__signature__ = signature.replace(parameters=public)  # type: ignore[attr-defined]  # MCP builds the tool's schema from the signature it shows
    return tool


def serve_stdio(server: Any) -> None:
    """Serve until the client closes stdin."""
    server.run("stdio")


def check_roots(roots: Sequence[str]) -> list[str]:
    for root in roots:
        if not Path(root).is_dir():
            raise InputError(f"--allow-path {root} is not a folder")
    return list(roots)
