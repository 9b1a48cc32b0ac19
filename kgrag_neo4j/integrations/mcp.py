"""An MCP server over one namespace (extra ``mcp``), run by ``kgrag mcp`` on stdio.

Tools, all scoped to the namespace the server was started with (a client cannot name
another one):

| tool | does |
|---|---|
| ``search_<mode>(query, top_k=5)`` | one per retrieval mode (vector, hybrid, graph, ..., and those plugins declare), described by its declaration: results with ids, source, scores and graph context, plus the text an agent reads |
| ``ingest_text(text, source, title="")`` | ingest text as a document (idempotent per source) |
| ``ingest_path(path)`` | ingest a file, a folder or a glob, only inside the allowed folders (``--allow-path``); not offered without them |
| ``list_documents(limit=50)`` | the namespace's documents, newest first |

A client is not trusted: without ``--allow-path`` the server reads no file at all (an MCP host
often starts servers in ``/``, so "the working directory" could be the whole disk); every
file an ``ingest_path`` reaches, through a glob or a symlink, must resolve inside an allowed
folder, and is checked again when it is opened. Calls run ``MAX_CONCURRENT_CALLS`` at a time
(the others wait their turn instead of exhausting the database's connection pool), ingests one
at a time; a query, a text and its names have size limits. A call the client cancels (or
abandons by disconnecting) stops its ingest before its next write and returns only once the
worker is done, so nothing is written after it and the server does not exit mid-write.

Built on the SDK's high-level server (``MCPServer`` in mcp 2, ``FastMCP`` in mcp 1). Nothing
but the protocol is written to stdout.
"""

from __future__ import annotations

import asyncio
import contextlib
import glob
import os
import signal
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError, InputError, KgragError
from ..protocols import Store
from ..retrieval.answer import retrieve_async
from ..retrieval.format import format_knowledge
from ..validation import check_int

__all__ = ["MAX_CONCURRENT_CALLS", "MAX_NAME_CHARS", "MAX_QUERY_CHARS", "MAX_TEXT_BYTES", "build_server", "serve_stdio"]

#: tool calls served at once; the rest wait (each search holds a database connection)
MAX_CONCURRENT_CALLS = 16
#: the longest query a search takes (a question, not a document)
MAX_QUERY_CHARS = 10_000
#: the largest text ``ingest_text`` takes, in UTF-8 bytes (ingesting holds ~15x it in memory)
MAX_TEXT_BYTES = 4 * 1024 * 1024
#: the longest ``source``, ``title`` or ``path``
MAX_NAME_CHARS = 4_096

INSTRUCTIONS = (
    "kgrag: a Neo4j knowledge graph of documents, chunks and entities. Use the search_* tools to "
    "find passages (search_hybrid is a good default; search_graph follows links between passages), "
    "ingest_text / ingest_path to add knowledge, list_documents to see what is there."
)


def _description(mode: str) -> str:
    """What the tool of ``mode`` searches: its declaration's description (the mode's name for a
    retriever no mode declares)."""
    from ..retrieval.registry import modes

    return next((m.description for m in modes() if m.name == mode), mode)


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


def _check_name(value: Any, name: str, *, required: bool = True) -> str:
    """A path, source or title a client sent: text, short, without a null byte."""
    if not isinstance(value, str) or (required and not value.strip()):
        raise InputError(f"{name} must be non-empty text")
    if "\x00" in value:
        raise InputError(f"{name} holds a null byte")
    if len(value) > MAX_NAME_CHARS:
        raise InputError(f"{name} is {len(value)} characters; the limit is {MAX_NAME_CHARS}")
    return value


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
    ``store``, all built for ``namespace``. ``allowed_roots``: folders ``ingest_path`` may read;
    none (the default): no ``ingest_path`` tool, the server reads no file."""
    roots = [Path(r).resolve() for r in allowed_roots]
    server_class, ToolError = _sdk()
    server = server_class(name, instructions=INSTRUCTIONS + f" Namespace: {namespace}.")
    calls = asyncio.Semaphore(MAX_CONCURRENT_CALLS)
    ingests = asyncio.Lock()  # one at a time: cancelling one must not cancel another

    def refuse(exc: KgragError) -> Exception:
        # an error result whose one line the client (and its model) can read
        return ToolError(f"{type(exc).__name__}: {exc}")

    def run(fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except KgragError as exc:
            raise refuse(exc) from None

    async def ingesting(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``fn`` in a worker thread; when the call is cancelled, the ingestor is told to stop
        before its next write and the call ends once the worker has."""
        async with calls, ingests:
            ingestor.reset_cancel()
            worker = asyncio.ensure_future(asyncio.to_thread(run, fn, *args, **kwargs))
            try:
                return await asyncio.shield(worker)
            except asyncio.CancelledError:
                ingestor.cancel()
                with contextlib.suppress(Exception):
                    await worker
                raise

    for mode, retriever in retrievers.items():

        async def search(query: str, top_k: int = 5, _retriever: Any = retriever, _mode: str = mode) -> dict[str, Any]:
            try:
                check_int(top_k, "top_k", minimum=1, maximum=100, error=InputError)
                if isinstance(query, str) and len(query) > MAX_QUERY_CHARS:
                    raise InputError(f"the query is {len(query)} characters; the limit is {MAX_QUERY_CHARS}")
            except InputError as exc:
                raise refuse(exc) from None
            try:  # the store's async reads: the server keeps answering while this one waits
                async with calls:
                    results = await retrieve_async(_retriever, query, top_k)
            except KgragError as exc:
                raise refuse(exc) from None
            return {
                "mode": _mode,
                "namespace": namespace,
                "results": [r.to_json() for r in results],
                "text": format_knowledge(results),
            }

        server.add_tool(
            _without_private(search),
            name=f"search_{mode}",
            description=f"Search the knowledge graph: {_description(mode)}. Returns the top_k passages.",
        )

    # writes and file reading run in a worker thread: the loop keeps serving other requests
    async def ingest_text(text: str, source: str, title: str = "") -> dict[str, Any]:
        """Add text as a document named by source (re-adding the same source replaces it; the
        same content changes nothing)."""
        try:
            _check_name(source, "source")
            _check_name(title, "title", required=False)
            size = len(text.encode("utf-8", "surrogatepass")) if isinstance(text, str) else 0
            if size > MAX_TEXT_BYTES:
                raise InputError(f"the text is {size} bytes; the limit is {MAX_TEXT_BYTES} (ingest a file with ingest_path)")
        except InputError as exc:
            raise refuse(exc) from None
        r = await ingesting(ingestor.ingest_text, text, source=source, title=title)
        return {"document_id": r.document_id, "status": r.status, "chunks": r.chunk_count, "edges": r.edge_count}

    async def ingest_path(path: str) -> dict[str, Any]:
        """Add a file, every supported file under a folder (Markdown, text, HTML, PDF, ...), or
        the files a glob pattern matches; only inside the folders this server may read."""
        try:
            target = checked_path(path)
        except InputError as exc:
            raise refuse(exc) from None
        return await ingesting(ingest_path_now, target)

    def checked_path(path: str) -> str:
        _check_name(path, "path")
        target = os.path.abspath(os.path.expanduser(path))
        # a pattern is held to the folder it starts in (and every match is checked again by
        # the file selection); a plain path must lead inside, wherever its symlinks point
        start = target
        while glob.has_magic(start):
            start = os.path.dirname(start)
        if not _inside(Path(start).resolve(), roots):
            raise InputError(f"{path} is outside the folders this server may read: {', '.join(map(str, roots))}")
        return target

    def ingest_path_now(target: str) -> dict[str, Any]:
        from ..ingestion.batch import ingest_run

        # as `kgrag ingest` runs it: regular files only, symlinks leading out of the folder
        # skipped (and recorded), the run stopped when the database is gone; and every file
        # inside the allowed folders, however a glob or a symlink reached it
        tally = ingest_run(ingestor, [target], roots=[str(r) for r in roots])
        failed = tally.counts["failed"] + tally.counts["not_attempted"]
        return {"files": tally.rows, "failed": failed, "stopped": tally.stopped}

    async def list_documents(limit: int = 50) -> dict[str, Any]:
        """The documents of the namespace, newest first."""
        async with calls:
            docs = await asyncio.to_thread(run, store.list_documents, limit=max(1, min(limit, 1000)))
        return {
            "namespace": namespace,
            "documents": [{"id": d.id, "source": d.source, "title": d.title, "created_at": d.created_at} for d in docs],
        }

    tools: list[Callable[..., Any]] = [ingest_text, list_documents]
    if roots:
        tools.insert(1, ingest_path)
    for fn in tools:
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
    """Serve until the client closes stdin. A SIGTERM (what a client sends a server that
    does not exit at once) ends the serving as a closed stdin does: calls in progress are
    cancelled and their workers finished, instead of the process dying mid-write."""

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    with contextlib.suppress(ValueError):  # not the main thread: no signal handlers there
        signal.signal(signal.SIGTERM, stop)
    with contextlib.suppress(KeyboardInterrupt):
        server.run("stdio")


def check_roots(roots: Sequence[str]) -> list[str]:
    for root in roots:
        if not Path(root).is_dir():
            raise InputError(f"--allow-path {root} is not a folder")
    return list(roots)
