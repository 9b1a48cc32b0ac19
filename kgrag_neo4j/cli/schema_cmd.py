"""``kgrag init`` and ``kgrag schema status``."""

from __future__ import annotations

import click

from .context import AppContext, emit_json, handle_errors, namespace_option, pass_app


@click.command("init")
@click.option("--dimensions", type=int, help="Embedding length (default: the chosen embedder's).")
@click.option("--embedder", envvar="KGRAG_EMBEDDER", show_envvar=True, help="hashing | wordllama | minilm | cohere.")
@namespace_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
@handle_errors
def init(app: AppContext, dimensions, embedder, namespace, as_json) -> None:
    """Create constraints, vector and full-text indexes; wait until ONLINE.

    Example: kgrag init --dimensions 256
    """
    model = "unknown"
    if dimensions is None or embedder:
        from ..providers.select import describe_embedder, select_embedder

        chosen = select_embedder(embedder)
        click.echo(f"embedder: {describe_embedder(chosen)}", err=True)
        model, dimensions = chosen.name, dimensions or chosen.dimensions
    status = app.store(namespace).init_schema(dimensions, model=model)
    if as_json:
        emit_json(status.as_dict())
    else:
        click.echo(f"schema ready: {len(status.indexes)} indexes ONLINE, {status.dimensions} dimensions")


@click.group()
def schema() -> None:
    """Inspect the schema kgrag created."""


@schema.command("status")
@namespace_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
@handle_errors
def status(app: AppContext, namespace, as_json) -> None:
    """List indexes with their state, and the recorded embedding model and dimensions.

    Example: kgrag schema status --json
    """
    st = app.store(namespace).schema_status()
    if as_json:
        emit_json(st.as_dict())
        return
    click.echo(f"ready: {st.ready}  dimensions: {st.dimensions}  model ({namespace}): {st.model}")
    if st.missing:
        click.echo("missing: " + ", ".join(st.missing))
    for i in st.indexes:
        hnsw = f"  HNSW m {i['hnsw_m']}, ef_construction {i['hnsw_ef_construction']}" if i.get("hnsw_m") else ""
        if i.get("quantized"):
            hnsw += ", quantized"
        click.echo(f"  {i['name']:28} {i['type']:10} {i['state']}{hnsw}")
