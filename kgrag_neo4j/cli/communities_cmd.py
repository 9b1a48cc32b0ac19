"""``kgrag communities build|update|list|show``: Leiden communities of the entity graph."""

from __future__ import annotations

from collections.abc import Callable

import click

from .ask_cmd import chat_model, llm_option
from .context import FINITE_FLOAT, AppContext, emit_json, handle_errors, namespace_option, pass_app


@click.group()
def communities() -> None:
    """Leiden communities of the entity graph and their reports (used by local search)."""


@communities.command("build")
@namespace_option
@click.option("--levels", type=int, default=2, show_default=True, help="Hierarchy levels (0 = finest).")
@click.option(
    "--resolution", type=FINITE_FLOAT, default=1.0, show_default=True, help="Leiden resolution (higher: smaller communities)."
)
@click.option("--seed", type=int, default=42, show_default=True, help="Random seed (same seed, same communities).")
@llm_option
@click.option("--workers", type=click.IntRange(min=1), default=4, show_default=True, help="With --llm: reports written at once.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
@handle_errors
def build(app: AppContext, namespace, levels, resolution, seed, llm, workers, as_json) -> None:
    """Cluster the entities with Leiden and store communities with their reports
    (extractive, or written by a chat model with --llm), replacing the previous ones in
    one transaction.

    Example: kgrag communities build --levels 2 --llm openai
    """
    from ..communities.build import build_communities

    chat = chat_model(llm) if llm else None

    def progress(stage: str, done: int, total: int) -> None:
        if chat is not None and (done == total or done % 10 == 0):
            click.echo(f"{stage}: {done}/{total}", err=True)

    summary = build_communities(
        app.store(namespace), levels=levels, resolution=resolution, seed=seed, chat=chat, workers=workers,
        progress=progress,
    )  # fmt: skip
    if as_json:
        emit_json(summary.as_dict())
        return
    levels_text = ", ".join(f"level {k}: {v}" for k, v in sorted(summary.by_level.items())) or "none"
    click.echo(f"{summary.communities} communities ({levels_text}) over {summary.entities} entities; replaced {summary.deleted}")


@communities.command("update")
@namespace_option
@llm_option
@click.option("--workers", type=click.IntRange(min=1), default=4, show_default=True, help="With --llm: reports written at once.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: placed, unplaced, pruned, stale_reports_regenerated, ...")
@pass_app
@handle_errors
def update(app: AppContext, namespace, llm, workers, as_json) -> None:
    """Bring the communities up to date without clustering again: place the entities in no
    community (each joins the community most of its relationship weight points to, ties to
    the smallest id; one with no neighbour in a community stays out, as in a build), drop
    empty communities, and write again only the reports of stale communities (a member
    changed, joined or left). `kgrag communities build` re-clusters everything.

    Example: kgrag communities update --json
    """
    from ..communities.update import update_communities

    chat = chat_model(llm) if llm else None
    summary = update_communities(app.store(namespace), chat=chat, workers=workers, progress=_progress_lines())
    if as_json:
        emit_json(summary.as_dict())
        return
    click.echo(
        f"placed {summary.placed} entities ({summary.unplaced} in no community), "
        f"regenerated {summary.stale_reports_regenerated} stale reports, pruned {summary.pruned} empty communities; "
        f"{summary.communities} communities"
        + (f"; {summary.still_stale} changed meanwhile and stay stale" if summary.still_stale else "")
    )


def _progress_lines() -> Callable[[str, int, int], None]:
    """On stderr (stdout stays data), a line each time a stage passes another tenth."""
    shown: dict[str, int] = {}

    def show(stage: str, done: int, total: int) -> None:
        tenth = min(10, done * 10 // total) if total else 10
        if shown.get(stage) != tenth:
            shown[stage] = tenth
            click.echo(f"{stage}: {done}/{total}", err=True)

    return show


@communities.command("list")
@namespace_option
@click.option("--level", type=int, help="Only this level.")
@click.option("--limit", type=int, help="Most communities to show.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
@handle_errors
def list_cmd(app: AppContext, namespace, level, limit, as_json) -> None:
    """Communities by level, highest rank first.

    Example: kgrag communities list --level 0
    """
    rows = app.store(namespace).list_communities(level=level, limit=limit)
    if as_json:
        emit_json([c.as_dict() for c in rows])
        return
    for c in rows:
        click.echo(f"L{c.level} {c.rank:8.2f} {c.members:5}  {c.id}  {c.title}" + ("  [stale]" if c.stale else ""))


@communities.command("show")
@click.argument("community_id")
@namespace_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
@handle_errors
def show(app: AppContext, community_id, namespace, as_json) -> None:
    """One community: its report, parent, children and members.

    Example: kgrag communities show com_0123...
    """
    c = app.store(namespace).get_community(community_id)
    if as_json:
        emit_json(c.as_dict())
        return
    click.echo(f"{c.id} (level {c.level}, rank {c.rank:.2f}, {c.members} members)")
    if c.stale:
        click.echo("stale: its members changed since this report (`kgrag communities update` writes it again)")
    if c.parent_id:
        click.echo(f"parent: {c.parent_id}")
    if c.child_ids:
        click.echo("children: " + ", ".join(c.child_ids))
    click.echo("")
    click.echo(c.full_content or c.summary)
