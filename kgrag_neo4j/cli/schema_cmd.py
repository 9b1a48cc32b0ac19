"""``kgrag init``, ``kgrag schema status`` and ``kgrag schema drop-unused``."""

from __future__ import annotations

import click

from .context import AppContext, emit_json, handle_errors, namespace_option, pass_app, printable


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
    """List indexes with their state, the recorded embedding model and dimensions, and the
    vector slots: each one's size, indexes and the namespaces (and models) in it.

    Example: kgrag schema status --json
    """
    store = app.store(namespace)
    st = store.schema_status()
    slots = store.vector_slots()
    if as_json:
        emit_json({**st.as_dict(), "vector_slots": [s.as_dict() for s in slots]})
        return
    click.echo(f"ready: {st.ready}  dimensions: {st.dimensions}  model ({namespace}): {st.model}")
    if st.missing:
        click.echo("missing: " + ", ".join(st.missing))
    for s in slots:
        users = ", ".join(printable(n) for n in s.namespaces) or "no namespace (`kgrag schema drop-unused` drops it)"
        models = f" [{', '.join(s.models)}]" if s.models else ""
        click.echo(f"slot {s.slot}: {s.dimensions} dimensions, {s.chunk_index} + {s.entity_index}{models}: {users}")
    for i in st.indexes:
        hnsw = f"  HNSW m {i['hnsw_m']}, ef_construction {i['hnsw_ef_construction']}" if i.get("hnsw_m") else ""
        if i.get("quantized"):
            hnsw += ", quantized"
        click.echo(f"  {i['name']:28} {i['type']:10} {i['state']}{hnsw}")


@schema.command("drop-unused")
@click.option("--dry-run", is_flag=True, help="Only say which slots would be dropped.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
@handle_errors
def drop_unused(app: AppContext, dry_run, as_json) -> None:
    """Drop the vector indexes of every slot no namespace uses any more (after a re-embed or
    the delete of the last namespace of a model), which frees the slot for another size.

    Example: kgrag schema drop-unused --dry-run
    """
    from ..settings import DEFAULT_NAMESPACE

    dropped = app.store(DEFAULT_NAMESPACE).drop_unused_vector_slots(dry_run=dry_run)
    if as_json:
        emit_json({"dry_run": dry_run, "dropped": [s.as_dict() for s in dropped]})
        return
    verb = "would drop" if dry_run else "dropped"
    if not dropped:
        click.echo("no unused vector slot")
    for s in dropped:
        click.echo(f"{verb} slot {s.slot} ({s.dimensions} dimensions): {s.chunk_index}, {s.entity_index}")
