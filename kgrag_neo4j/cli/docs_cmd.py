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
    """List documents, newest first; says on stderr how many more --limit left out.

    Example: kgrag docs list --json
    """
    store = app.store(namespace)
    rows = store.list_documents_with_counts(limit=limit)
    if as_json:
        emit_json(
            [
                {
                    "id": d.id,
                    "source": d.source,
                    "title": d.title,
                    "chunks": n,
                    "created_at": d.created_at,
                    "metadata": d.metadata,
                }
                for d, n in rows
            ]
        )
    else:
        for d, n in rows:
            click.echo(f"{d.id}  {n:5d} chunks  {printable(d.source)}")
    more = store.count_documents() - len(rows) if len(rows) == limit else 0
    if more > 0:  # on stderr: the JSON on stdout stays the list it always was
        click.echo(f"{more} more document{'s' if more != 1 else ''} not shown (--limit {limit + more} lists all)", err=True)


def find_document(store, given: str) -> str | None:
    """The id of the stored document ``given`` names: its id, or the file it was ingested from
    (ingest's identity is the file's resolved path, or the --source it was given, so the path
    as typed and as resolved are both tried). None when no document of the namespace matches."""
    import os

    candidates = [given]
    for source in (os.path.realpath(given), given):
        candidates.append(store.document_id_of_source(source))
    known = store.document_states(list(dict.fromkeys(candidates)))
    return next((c for c in candidates if c in known), None)


@docs.command("show")
@click.argument("document_id", metavar="DOCUMENT")
@namespace_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
@handle_errors
def show(app: AppContext, document_id, namespace, as_json) -> None:
    """Show a document and its chunks; DOCUMENT is its id or the file it was ingested from.

    Example: kgrag docs show docs/cli.md
    """
    store = app.store(namespace)
    found = find_document(store, document_id)
    if found is None:
        raise NotFoundError(f"no document {document_id!r} in namespace {namespace!r} (neither an id nor a file ingested)")
    d = store.get_document(found)
    chunks = store.list_document_chunks(found)
    if as_json:
        emit_json(
            {
                "id": d.id,
                "source": d.source,
                "title": d.title,
                "content_hash": d.content_hash,
                "created_at": d.created_at,
                "metadata": d.metadata,
                "chunks": [
                    {"id": c.id, "index": c.chunk_index, "parent_id": c.parent_id, "tokens": c.token_count, "content": c.content}
                    for c in chunks
                ],
            }
        )
        return
    click.echo(f"{d.title or d.source}  ({d.id})\nsource: {d.source}\nchunks: {len(chunks)}")
    for c in chunks:
        head = c.content.replace("\n", " ")[:100]
        click.echo(f"  [{c.chunk_index}] {head}")


@docs.command("delete")
@click.argument("document_ids", metavar="DOCUMENT...", nargs=-1, required=True)
@namespace_option
@click.option(
    "--embedder",
    envvar="KGRAG_EMBEDDER",
    show_envvar=True,
    help="For the entity graph's descriptions (default: the one the namespace records).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
@handle_errors
def delete(app: AppContext, document_ids, namespace, embedder, as_json) -> None:
    """Delete documents with their chunks, edges and orphaned entities. When the namespace has
    an entity graph, it is brought up to date once, after the last delete (the entities,
    links and community marks the documents' text gave).

    Each DOCUMENT is an id or the file it was ingested from (the path as given to `kgrag
    ingest`, relative or absolute, or its --source). When one of them is not found, nothing is
    deleted.

    Example: kgrag docs delete docs/cli.md docs/api.md
    """
    store = app.store(namespace)
    found = [find_document(store, d) for d in document_ids]
    missing = [d for d, f in zip(document_ids, found) if f is None]
    if missing:  # with --json too: a script must see that nothing was deleted
        if as_json:
            emit_json(
                [{"id": d, "deleted": False} for d in document_ids]
                if len(document_ids) > 1
                else {"id": document_ids[0], "deleted": False}
            )
        listed = ", ".join(repr(d) for d in missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise NotFoundError(
            f"no document {listed} in namespace {namespace!r} (neither an id nor a file ingested); nothing deleted"
        )
    gone = set(store.delete_documents([f for f in found if f is not None]))
    rows = [
        {"id": document_id, "given": given, "deleted": document_id in gone} for given, document_id in zip(document_ids, found)
    ]
    if any(r["deleted"] for r in rows):
        _maintain_entities(store, embedder)
    if as_json:
        out = [{"id": r["id"], "deleted": r["deleted"]} for r in rows]
        emit_json(out if len(document_ids) > 1 else out[0])
    if not all(r["deleted"] for r in rows):  # deleted by someone else in the meantime
        vanished = [r["given"] for r in rows if not r["deleted"]]
        raise NotFoundError(f"no document {vanished[0]!r} in namespace {namespace!r} any more (deleted meanwhile)")
    if not as_json:
        for r in rows:
            shown = printable(r["id"]) if r["id"] == r["given"] else f"{printable(r['id'])} ({printable(r['given'])})"
            click.echo(f"deleted {shown}")


def _maintain_entities(store, embedder: str | None) -> None:
    from ..entities.maintain import maintain_entity_graph
    from ..providers.select import embedder_for_model, select_embedder

    if store.entity_graph_generation() is None:
        return
    chosen = select_embedder(embedder) if embedder else embedder_for_model(store.schema_status().model)
    maintain_entity_graph(store, chosen)
