"""The ``kgrag`` command: a thin shell over the library; each command calls one library method."""

from __future__ import annotations

import logging
import os

import click

from .ask_cmd import ask
from .chunks_cmd import chunks
from .communities_cmd import communities
from .context import AppContext, connection_options
from .cypher_cmd import cypher
from .docs_cmd import docs
from .edges_cmd import edges
from .entities_cmd import entities
from .ingest_cmd import ingest
from .mcp_cmd import mcp
from .namespace_cmd import namespace
from .schema_cmd import init, schema
from .search_cmd import search
from .server_cmd import server
from .triples_cmd import graph, triples

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
    ctx.call_on_close(_quiet_driver_logs())


def _quiet_driver_logs():
    """Keep the driver's own log lines (a warning per transaction retry during an outage) off
    the terminal while a command runs: the command reports the outcome in one line. Returns
    the undo."""
    logger = logging.getLogger("neo4j")
    handler, propagate = logging.NullHandler(), logger.propagate
    logger.addHandler(handler)
    logger.propagate = False

    def undo() -> None:
        logger.removeHandler(handler)
        logger.propagate = propagate

    return undo


for _command in (
    ask,
    chunks,
    communities,
    cypher,
    docs,
    edges,
    entities,
    graph,
    ingest,
    init,
    mcp,
    namespace,
    schema,
    search,
    server,
    triples,
):
    cli.add_command(_command)
del _command


def main() -> None:
    # The HF tokenizer (WordLlama's) spreads a batch over every core and its threads spin while
    # they wait; beside the Neo4j an ingest writes to, one thread does more (measured on an
    # ingest from text: docs/benchmarks.md).
    # Only in this process, and only when the user has not chosen.
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    cli(prog_name="kgrag")
