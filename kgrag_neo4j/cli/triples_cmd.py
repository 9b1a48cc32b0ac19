"""``kgrag triples``: status, add, query, stats, clear and prune of a namespace's knowledge graph of triples;
``kgrag graph`` is its old name, kept hidden."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import click

from .context import AppContext, emit_json, handle_errors, namespace_option, pass_app

__all__ = ["graph", "triples", "format_status", "format_stats", "format_triples"]

_LABEL_WIDTH = 15
#: first column of the stats tables, 17 wide ("PREDICATE        COUNT")
_COLUMN_WIDTH = 17


def _field(label: str, value: Any) -> str:
    return f"  {label + ':':<{_LABEL_WIDTH}}{value}"


def format_status(status: Mapping[str, Any]) -> str:
    return "\n".join(
        [
            "Knowledge Graph Status",
            _field("Enabled", "true" if status["enabled"] else "false"),
            _field("Backend", status["backend"]),
            _field("URI", status["uri"]),
            _field("Database", status["database"] or "(server default)"),
            _field("Namespace", status["namespace"]),
            _field("Triples", status["triples"]),
        ]
    )


def _table(title: str, counts: Mapping[str, int]) -> list[str]:
    width = max([_COLUMN_WIDTH - 2, len(title), *(len(k) for k in counts)]) + 2
    return [f"{title:<{width}}COUNT", *(f"{k:<{width}}{v}" for k, v in counts.items())]


def format_stats(stats: Mapping[str, Any]) -> str:
    lines = ["Knowledge Graph Statistics", f"  Total Triples: {stats['total_triples']}", ""]
    lines += _table("PREDICATE", stats["predicates"]) if stats["predicates"] else ["(no triples)"]
    lines += ["", *_table("NODES", stats["nodes"]), "", *_table("EDGES", stats["edges"])]
    return "\n".join(lines)


def format_triples(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "no triples found"
    ws = max(len("SUBJECT"), *(len(r["subject"]) for r in rows)) + 2
    wp = max(len("PREDICATE"), *(len(r["predicate"]) for r in rows)) + 2
    lines = [f"{'SUBJECT':<{ws}}{'PREDICATE':<{wp}}OBJECT"]
    lines += [f"{r['subject']:<{ws}}{r['predicate']:<{wp}}{r['object']}" for r in rows]
    lines.append(f"({len(rows)} triple{'s' if len(rows) != 1 else ''})")
    return "\n".join(lines)


@click.group()
def triples() -> None:
    """The knowledge graph of triples (subject -predicate-> object) and its upkeep."""


@triples.command("status")
@namespace_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
@handle_errors
def status(app: AppContext, namespace, as_json) -> None:
    """Whether the graph is there, where, and how many triples the namespace holds.

    Example: kgrag triples status --namespace docs
    """
    store = app.store(namespace)
    info = {
        "enabled": True,
        "backend": "neo4j",
        "uri": store.runner.where,
        "database": store.database,
        "namespace": namespace,
        "triples": store.count_triples(),
    }
    if as_json:
        emit_json(info)
    else:
        click.echo(format_status(info))


@triples.command("add")
@click.argument("triple", nargs=-1)
@click.option(
    "--file",
    "file_",
    type=click.Path(dir_okay=False, allow_dash=True),
    help="Triples to add: Subject|predicate|Object lines or a JSON list ('-': stdin).",
)
@click.option(
    "--predicate",
    "predicates",
    multiple=True,
    help="Declare a predicate beyond the nine built-in ones (repeatable; lower_snake_case).",
)
@click.option("--meta", "meta", multiple=True, help="KEY=VALUE metadata on every triple added (repeatable).")
@namespace_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
@handle_errors
def add(app: AppContext, triple, file_, predicates, meta, namespace, as_json) -> None:
    """Add triples (SUBJECT PREDICATE OBJECT, or --file), all in one transaction.

    The predicate is one of the nine built-in ones (related_to, caused_by, resolved_by,
    follows, similar_to, contains, in_session, reflects_on, learned_from) or one declared
    with --predicate. A file with any bad line adds nothing and names the line.

    Example: kgrag triples add "error:timeout" resolved_by "fix:raise pool size" --meta session=s1
    """
    from ..errors import InputError
    from ..triples.parsing import parse_triples
    from ..types.triples import PredicateRegistry, Triple

    registry = PredicateRegistry([p.strip().lower() for p in predicates])
    metadata = {}
    for item in meta:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError(f"--meta takes KEY=VALUE, got {item!r}")
        metadata[key.strip()] = value
    if triple and file_:
        raise InputError("give one triple as SUBJECT PREDICATE OBJECT or --file, not both")
    if file_:
        text = click.open_file(file_, encoding="utf-8").read()
        parsed = parse_triples(text, registry)
        if parsed.problems:
            raise InputError(f"{file_}: {parsed.dropped} bad line(s), nothing added; first: {parsed.problems[0]}")
        triples = [Triple(t.subject, t.predicate, t.object, {**dict(t.metadata), **metadata}) for t in parsed]
        if not triples:
            raise InputError(f"{file_} holds no triples")
    elif len(triple) == 3:
        subject, predicate, object_ = triple
        triples = [Triple(subject.strip(), registry.validate(predicate), object_.strip(), metadata)]
    else:
        raise InputError(f"give SUBJECT PREDICATE OBJECT (3 values, got {len(triple)}) or --file")
    written = app.store(namespace).add_triples(triples, registry=registry)
    if as_json:
        emit_json({"namespace": namespace, "added": written, "predicates": sorted({t.predicate for t in triples})})
    else:
        click.echo(f"added {written} triple{'s' if written != 1 else ''} to namespace {namespace!r}")


@triples.command("query")
@click.option("--subject", help="Subject name (compared normalised: case and spacing ignored).")
@click.option("--predicate", help="Predicate, e.g. caused_by: one of the known predicates or one the namespace uses.")
@click.option("--object", "object_", help="Object name.")
@click.option("--limit", type=click.IntRange(min=1), default=100, show_default=True, help="Triples at most.")
@namespace_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
@handle_errors
def query(app: AppContext, subject, predicate, object_, limit, namespace, as_json) -> None:
    """Triples by subject, predicate, object, or any combination (none: all of them).

    Example: kgrag triples query --subject "error:timeout" --predicate resolved_by --limit 5
    """
    store = app.store(namespace)
    registry = None
    if predicate is not None:
        # the known predicates, plus any the namespace already uses: a typo is refused
        # with the allowed names instead of silently matching nothing
        import re

        from ..types.triples import PredicateRegistry

        store.lookup_statement(predicate=predicate)  # a malformed name is refused as such first
        used = [p for p in store.predicate_stats() if re.fullmatch(r"[a-z][a-z0-9_]{0,63}", p)]
        registry = PredicateRegistry(extra=used)
    triples = store.query_triples(subject=subject, predicate=predicate, object=object_, limit=limit, registry=registry)
    rows = [{"subject": t.subject, "predicate": t.predicate, "object": t.object, "metadata": dict(t.metadata)} for t in triples]
    if as_json:
        emit_json(rows)
    else:
        click.echo(format_triples(rows))


@triples.command("stats")
@namespace_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
@handle_errors
def stats(app: AppContext, namespace, as_json) -> None:
    """Triples per predicate, and the namespace's nodes and edges by kind.

    Example: kgrag triples stats --json
    """
    store = app.store(namespace)
    predicates = store.predicate_stats()
    counts = store.graph_stats()
    out = {
        "namespace": namespace,
        "total_triples": sum(predicates.values()),
        "predicates": predicates,
        "nodes": counts["nodes"],
        "edges": counts["edges"],
    }
    if as_json:
        emit_json(out)
    else:
        click.echo(format_stats(out))


@triples.command("clear")
@click.option("--force", is_flag=True, help="Do not ask for confirmation.")
@namespace_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
@handle_errors
def clear(app: AppContext, force, namespace, as_json) -> None:
    """Delete every triple of the namespace (documents and chunks are kept).

    Entities that only triples used go with them. Asks first unless --force.

    Example: kgrag triples clear --namespace docs --force
    """
    store = app.store(namespace)
    if not force:
        n = store.count_triples()
        click.confirm(
            f"Delete all {n} triples of namespace {namespace!r}? Documents and chunks are kept.",
            abort=True,
            err=True,
        )
    removed = store.clear_triples()
    if as_json:
        emit_json({"namespace": namespace, **removed})
    else:
        kept = f" ({removed['kept_mentions']} mentions kept: the entity extractor uses them)" if removed["kept_mentions"] else ""
        click.echo(
            f"cleared namespace {namespace!r}: {removed['edges']} triples, "
            f"{removed['mentions']} chunk mentions, {removed['entities']} entities{kept}"
        )


@triples.command("prune")
@click.option("--dry-run", is_flag=True, help="Only count what would be removed.")
@namespace_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
@handle_errors
def prune(app: AppContext, dry_run, namespace, as_json) -> None:
    """Remove orphan chunks (no document owns them) and the chunk edges on them.

    Example: kgrag triples prune --dry-run
    """
    found = app.store(namespace).prune_orphans(dry_run=dry_run)
    if as_json:
        emit_json({"namespace": namespace, "dry_run": dry_run, **found})
        return
    verb = "would remove" if dry_run else "removed"
    click.echo(f"{verb} {found['chunks']} orphan chunks and {found['edges']} chunk edges")


def _say_old_name() -> None:
    # the old name keeps scripts working, and says once per call what to type instead
    click.echo("kgrag graph is the old name of kgrag triples; use kgrag triples", err=True)


#: the old name: the same subcommands (defined last, so all of them), hidden from --help and the CLI reference
graph = click.Group(
    "graph",
    commands=dict(triples.commands),
    callback=_say_old_name,
    hidden=True,
    help="The old name of kgrag triples (hidden; says so on stderr).",
)
