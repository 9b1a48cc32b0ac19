"""``kgrag namespace list|delete|reembed``: the tenants of the database, their removal, and
the switch of one to another embedding model."""

from __future__ import annotations

import sys
from typing import Any

import click

from ..errors import ConfigurationError, NotFoundError
from ..settings import DEFAULT_NAMESPACE
from .context import AppContext, emit_json, handle_errors, pass_app, printable

_COLUMNS = ("documents", "chunks", "entities", "communities", "triples")


@click.group()
def namespace() -> None:
    """Namespaces (tenants) of the database: list them, delete one, re-embed one."""


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


@namespace.command("reembed")
@click.argument("name")
@click.option(
    "--embedder",
    envvar="KGRAG_EMBEDDER",
    show_envvar=True,
    required=True,
    help="The new model: hashing | wordllama | minilm | cohere | openai.",
)
@click.option("--batch-size", type=int, default=256, show_default=True, help="Texts embedded per batch.")
@click.option(
    "--grace",
    type=float,
    default=10.0,
    show_default=True,
    help="Seconds the old vectors stay after the switch, for searches begun just before it.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
@handle_errors
def reembed(app: AppContext, name, embedder, batch_size, grace, as_json) -> None:
    """Embed every chunk and entity of namespace NAME again with another model, without
    downtime: the new vectors are written beside the old ones while searches keep using the
    old model, the namespace switches to the new model in one transaction, then the old
    vectors are removed. Ingest into NAME is refused until it finishes. Stopped anywhere
    (Ctrl-C, a lost connection), the same command finishes the job.

    Example: kgrag namespace reembed docs --embedder minilm
    """
    from ..ingestion.reembed import reembed_namespace
    from ..providers.select import describe_embedder, select_embedder

    chosen = select_embedder(embedder)
    if not as_json:
        click.echo(f"embedder: {describe_embedder(chosen)}", err=True)
    with _Bars(quiet=as_json) as bars:
        result = reembed_namespace(app.store(name), chosen, batch_size=batch_size, grace=grace, progress=bars.update)
    if as_json:
        emit_json(result.as_dict())
        return
    click.echo(
        f"namespace {printable(name)!r} now uses {result.model}: {result.chunks} chunks and {result.entities} "
        f"entities embedded, {result.removed} old vectors removed in {result.seconds:.1f}s"
    )


class _Bars:
    """One progress bar per phase on a terminal's stderr (nothing with --json or off a terminal)."""

    _LABELS = {"chunks": "embedding chunks", "entities": "embedding entities", "cleanup": "removing old vectors"}

    def __init__(self, *, quiet: bool):
        self.on = sys.stderr.isatty() and not quiet
        self.phase: str | None = None
        self.bar: Any = None
        self.shown = 0

    def __enter__(self) -> _Bars:
        return self

    def __exit__(self, *exc: object) -> None:
        self._close()

    def _close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None
        elif self.phase == "cleanup" and self.on:
            click.echo("", err=True)

    def update(self, phase: str, done: int, total: int) -> None:
        if not self.on:
            return
        if phase != self.phase:
            self._close()
            self.phase, self.shown = phase, 0
            if phase != "cleanup":
                self.bar = click.progressbar(length=max(total, 1), label=self._LABELS[phase], file=sys.stderr, show_pos=True)
                self.bar.__enter__()
        if self.bar is not None:
            self.bar.update(done - self.shown)
            self.shown = done
        elif phase == "cleanup":
            click.echo(f"\r{self._LABELS[phase]}: {done}", err=True, nl=False)
