"""``kgrag docs list|show|delete``."""

from __future__ import annotations

import click

from ..errors import NotFoundError
from .context import AppContext, emit_json, handle_errors, namespace_option, pass_app, printable


@click.group()
def docs() -> None:
    """Documents stored in a namespace."""


@docs.command("list")
@namespace_option
@click.option("--limit", type=click.IntRange(min=1), default=100, show_default=True, help="Documents at most.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
@handle_errors
def list_cmd(app: AppContext, namespace, limit, as_json) -> None:
    """List documents, newest first.

    Example: kgrag docs list --json
    """
    rows = app.store(namespace).list_documents_with_counts(limit=limit)
    if as_json:
        emit_json([{"id": d.id, "source": d.source, "title": d.title, "chunks": n, "created_at": d.created_at,
                    "metadata": d.metadata} for d, n in rows])
        return
    for d, n in rows:
        click.echo(f"{d.id}  {n:5d} chunks  {printable(d.source)}")


@docs.command("show")
@click.argument("document_id")
@namespace_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
@handle_errors
def show(app: AppContext, document_id, namespace, as_json) -> None:
    """Show a document and its chunks.

    Example: kgrag docs show doc_0123
    """
    store = app.store(namespace)
    d = store.get_document(document_id)
    chunks = store.list_document_chunks(document_id)
    if as_json:
        emit_json({"id": d.id, "source": d.source, "title": d.title, "content_hash": d.content_hash,
                   "created_at": d.created_at, "metadata": d.metadata,
                   "chunks": [{"id": c.id, "index": c.chunk_index, "parent_id": c.parent_id,
                               "tokens": c.token_count, "content": c.content} for c in chunks]})
        return
    click.echo(f"{d.title or d.source}  ({d.id})\nsource: {d.source}\nchunks: {len(chunks)}")
    for c in chunks:
        head = c.content.replace("\n", " ")[:100]
        click.echo(f"  [{c.chunk_index}] {head}")


@docs.command("delete")
@click.argument("document_id")
@namespace_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
@handle_errors
def delete(app: AppContext, document_id, namespace, as_json) -> None:
    """Delete a document with its chunks, edges and orphaned entities.

    Example: kgrag docs delete doc_0123
    """
    deleted = app.store(namespace).delete_document(document_id)
    if as_json:
        emit_json({"id": document_id, "deleted": deleted})
    if not deleted:  # with --json too: a script must see that nothing was deleted
        raise NotFoundError(f"no document {document_id!r} in namespace {namespace!r}")
    if not as_json:
        click.echo(f"deleted {printable(document_id)}")
