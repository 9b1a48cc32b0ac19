"""The ``kgrag`` command: a thin shell over the library; each command calls one library method."""

from __future__ import annotations

import click

from .context import AppContext, connection_options

__all__ = ["cli", "main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@connection_options
@click.option("--data-dir", envvar="KGRAG_DATA_DIR", show_envvar=True, help="Data dir of the local server.")
@click.version_option(package_name="kgrag-neo4j")
@click.pass_context
def cli(ctx: click.Context, uri, user, password, database, data_dir) -> None:
    """kgrag: a Neo4j-native Graph-RAG layer (ingest, search, graph admin)."""
    app = AppContext(uri=uri, user=user, password=password, database=database, data_dir=data_dir)
    ctx.obj = app
    ctx.call_on_close(app.close)


def _register() -> None:
    from . import cypher_cmd, schema_cmd, server_cmd

    for module in (server_cmd, schema_cmd, cypher_cmd):
        module.register(cli)
    # capability commands register themselves when their modules exist
    import importlib

    for name in ("ingest_cmd", "docs_cmd", "search_cmd", "ask_cmd", "edges_cmd", "graph_cmd", "entities_cmd", "communities_cmd", "mcp_cmd"):
        try:
            module = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
            continue
        module.register(cli)


_register()


def main() -> None:
    cli(prog_name="kgrag")
