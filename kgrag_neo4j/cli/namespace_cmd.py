"""``kgrag namespace list|delete``: the tenants of the database and their removal."""

from __future__ import annotations

import click

from ..errors import ConfigurationError, NotFoundError
from ..settings import DEFAULT_NAMESPACE
from .context import AppContext, emit_json, handle_errors, pass_app, printable

_COLUMNS = ("documents", "chunks", "entities", "communities", "triples")


@click.group()
def namespace() -> None:
    """Namespaces (tenants) of the database: list them, delete one."""


@namespace.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
@handle_errors
def list_cmd(app: AppContext, as_json) -> None:
    """Every namespace with its documents, chunks, entities, communities, triples and the
    embedder it was built with.

    Example: kgrag namespace list --json
    """
    rows = app.store(DEFAULT_NAMESPACE).list_namespaces()
    if as_json:
        emit_json([r.as_dict() for r in rows])
        return
    if not rows:
        click.echo("no namespaces")
        return
    width = max(len("NAMESPACE"), *(len(printable(r.namespace)) for r in rows)) + 2
    click.echo(f"{'NAMESPACE':<{width}}" + "".join(f"{c.upper():>13}" for c in _COLUMNS) + "  EMBEDDER")
    for r in rows:
        counts = "".join(f"{getattr(r, c):>13}" for c in _COLUMNS)
        embedder = f"{r.embedder} ({r.dimensions})" if r.embedder else "-"
        staged = f"  ({r.staged} chunks staged by an unfinished write)" if r.staged else ""
        click.echo(f"{printable(r.namespace):<{width}}{counts}  {embedder}{staged}")


@namespace.command("delete")
@click.argument("name")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
@handle_errors
def delete(app: AppContext, name, yes, as_json) -> None:
    """Delete everything of namespace NAME: documents, chunks, entities, communities,
    triples, and the embedder recorded for it (so it can start over with any embedder).
    Other namespaces are not touched. Runs in batches; asks first unless --yes.

    Example: kgrag namespace delete scratch --yes
    """
    try:
        store = app.store(name)
    except ConfigurationError:
        # a look-alike name made before such names were refused: it can still be deleted
        base = app.store(DEFAULT_NAMESPACE)
        if name not in {r.namespace for r in base.list_namespaces()}:
            raise
        store = base.with_namespace(name, existing=True)
    found = next((r for r in store.list_namespaces() if r.namespace == name), None)
    if found is None:
        raise NotFoundError(f"no namespace {printable(name)!r}")
    if not yes:
        click.confirm(
            f"Delete namespace {printable(name)!r}: {found.documents} documents, {found.chunks} chunks, "
            f"{found.entities} entities, {found.communities} communities, {found.triples} triples?",
            abort=True,
            err=True,
        )
    removed = store.delete_namespace()
    if as_json:
        emit_json({"namespace": name, **removed})
    else:
        click.echo(
            f"deleted namespace {printable(name)!r}: {removed['documents']} documents, {removed['chunks']} chunks, "
            f"{removed['entities']} entities, {removed['communities']} communities"
        )
