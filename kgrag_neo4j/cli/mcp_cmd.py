"""``kgrag mcp``: the MCP server over one namespace, on stdio."""

from __future__ import annotations

import click

from ..retrieval.modes import build_retriever
from .context import AppContext, handle_errors, namespace_option, pass_app
from .mode_flags import ModeChoice


@click.command("mcp")
@namespace_option
@click.option(
    "--embedder", envvar="KGRAG_EMBEDDER", show_envvar=True, help="hashing | wordllama | minilm | cohere | openai (as at ingest)."
)
@click.option(
    "--allow-path",
    "allow_paths",
    multiple=True,
    type=click.Path(file_okay=False),
    help="Folder ingest_path may read (repeatable). Without it the server reads no file: no ingest_path tool.",
)
@click.option(
    "--mode", "modes", multiple=True, type=ModeChoice(), help="Search modes to offer as tools (repeatable; default: all)."
)
@pass_app
@handle_errors
def mcp(app: AppContext, namespace, embedder, allow_paths, modes) -> None:
    """Serve search, ingest and document listing of one namespace to an MCP client over stdio.

    Tools: search_<mode> for each mode, ingest_text, list_documents, and ingest_path when
    --allow-path names the folders it may read (only files inside them, however a glob or a
    symlink leads). Configure the client to run it, e.g. {"command": "kgrag", "args": ["mcp", "--namespace", "docs"]}.

    Example: kgrag mcp --namespace docs --embedder wordllama --allow-path ./docs
    """
    from ..ingestion.ingestor import Ingestor
    from ..integrations.mcp import build_server, check_roots, serve_stdio
    from ..providers.select import describe_embedder, embedder_for_namespace
    from ..retrieval.registry import mode_names

    store = app.store(namespace)
    emb = embedder_for_namespace(embedder, None if embedder else store.embedding_model())
    click.echo(f"embedder: {describe_embedder(emb)}", err=True)
    store.ensure_embedder(emb.name, emb.dimensions)
    retrievers = {mode: build_retriever(mode, store, emb) for mode in (modes or mode_names())}
    server = build_server(
        namespace=namespace, store=store, retrievers=retrievers, ingestor=Ingestor(store, emb),
        allowed_roots=check_roots(allow_paths),
    )  # fmt: skip
    files = f"ingest_path reads {', '.join(allow_paths)}" if allow_paths else "no ingest_path (no --allow-path)"
    click.echo(f"kgrag MCP server on stdio: namespace {namespace!r}, tools for {', '.join(retrievers)}; {files}", err=True)
    serve_stdio(server)
