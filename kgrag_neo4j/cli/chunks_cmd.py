"""``kgrag chunks show``: one chunk with its document, edges and entities (the ids a search
prints, in its results and in how graph-found results were reached)."""

from __future__ import annotations

import click

from .context import AppContext, emit_json, handle_errors, namespace_option, pass_app, printable


@click.group()
def chunks() -> None:
    """Chunks stored in a namespace."""


def _edge_line(edge: dict, arrow: str) -> str:
    where = edge.get("title") or ""
    where = f"  [{printable(where)} #{edge.get('chunk_index') or 0}]" if where else ""
    description = f'  "{printable(edge["description"])}"' if edge.get("description") else ""
    return (
        f"  {edge['relation']:<14} weight {float(edge['weight']):.2f}  origin {edge.get('origin') or '-':<14} "
        f"{arrow} {edge['chunk_id']}{where}{description}"
    )


@chunks.command("show")
@click.argument("chunk_id")
@namespace_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON: chunk, document, outgoing, incoming, entities.")
@pass_app
@handle_errors
def show(app: AppContext, chunk_id, namespace, as_json) -> None:
    """Show a chunk: its content, its document, its edges both ways (type, weight, origin)
    and the entities it mentions.

    CHUNK_ID is an id a search printed (a result's, or the one a graph-found result was
    reached from), whole or its first characters when only one chunk starts with them.

    Example: kgrag chunks show chk_f0d054efe87c42e774cd5aa117b01211 --json
    """
    detail = app.store(namespace).chunk_detail(chunk_id)
    if as_json:
        emit_json(detail)
        return
    c, d = detail["chunk"], detail["document"] or {}
    click.echo(f"{c['id']}  (chunk {c.get('chunk_index') or 0} of {c.get('document_id') or '?'})")
    if d:
        title = d.get("title") or ""
        click.echo(f"document: {printable(title)}{' ' if title else ''}({printable(d.get('source') or '')})  {d['id']}")
    click.echo(f"tokens:   {c.get('token_count') or 0}\n")
    for line in (c.get("content") or "").splitlines():
        click.echo(f"  {printable(line)}")
    for name, arrow in (("outgoing", "->"), ("incoming", "<-")):
        edges = detail[name]
        click.echo(f"\n{name} edges ({len(edges)}):")
        for edge in edges:
            click.echo(_edge_line(edge, arrow))
    entities = detail["entities"]
    click.echo(f"\nentities mentioned ({len(entities)}):")
    for e in entities:
        click.echo(f"  {printable(e['name'])} ({e.get('type') or 'OTHER'})  {e['id']}")
