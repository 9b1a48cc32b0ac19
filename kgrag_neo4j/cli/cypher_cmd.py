"""``kgrag cypher list|show|params|run``: the statement files, usable without Python and from
Neo4j Browser (``params`` prints the ``:params`` line to paste)."""

from __future__ import annotations

import json
from typing import Any

import click

from ..cypher_registry import load_registry
from ..errors import InputError
from .context import AppContext, emit_json, handle_errors, pass_app


def parse_param(text: str) -> tuple[str, object]:
    """``key=value``; the value is JSON when it parses as JSON, else the plain string."""
    if "=" not in text:
        raise InputError(f"--param takes key=value, got {text!r}")
    key, raw = text.split("=", 1)
    key = key.strip()
    if not key.isidentifier():
        raise InputError(f"parameter name {key!r} is not a valid identifier")
    if _bracket_depth(raw) > MAX_PARAM_DEPTH:
        # refused before json.loads: the decoder would recurse to the interpreter's limit, where
        # any finalizer the garbage collector runs fails too and prints to stderr
        raise InputError(f"--param {key}: the value is nested deeper than {MAX_PARAM_DEPTH} levels")
    try:
        value = json.loads(raw)
    except RecursionError:
        raise InputError(f"--param {key}: the value is nested too deeply") from None
    except ValueError:
        value = raw
    _check_sendable(key, value)
    return key, value


#: deeper values are refused before the driver recurses into them
MAX_PARAM_DEPTH = 64


def _bracket_depth(raw: str) -> int:
    """The deepest nesting of ``[`` and ``{`` in ``raw`` outside JSON strings, without recursion."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in raw:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def _check_sendable(key: str, value: object) -> None:
    """Refuse what Neo4j cannot take as a parameter value: integers beyond 64 bits, nesting
    deeper than ``MAX_PARAM_DEPTH``."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_PARAM_DEPTH:
            raise InputError(f"--param {key}: the value is nested deeper than {MAX_PARAM_DEPTH} levels")
        if isinstance(item, bool):
            continue
        if isinstance(item, int) and not -(2**63) <= item < 2**63:
            raise InputError(f"--param {key}: {item} is outside the 64-bit integer range Neo4j stores")
        if isinstance(item, list):
            stack.extend((x, depth + 1) for x in item)
        elif isinstance(item, dict):
            stack.extend((x, depth + 1) for x in item.values())


@click.group()
def cypher() -> None:
    """The parameterized Cypher files kgrag runs."""


@cypher.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@handle_errors
def list_cmd(as_json) -> None:
    """List every statement with its mode and parameters.

    Example: kgrag cypher list
    """
    reg = load_registry()
    rows = [{"name": q.name, "mode": q.mode, "params": sorted(q.param_names), "doc": q.doc} for q in reg.values()]
    if as_json:
        emit_json(rows)
        return
    for r in rows:
        click.echo(f"{r['name']:40} {r['mode']:6} {', '.join(r['params'])}")


@cypher.command("show")
@click.argument("name")
@handle_errors
def show(name) -> None:
    """Print a statement file (header and body), ready to paste into Browser.

    Example: kgrag cypher show chunks/search_vector
    """
    q = load_registry()[name]
    with open(q.path, encoding="utf-8") as f:
        click.echo(f.read().rstrip())


@cypher.command("params")
@click.argument("name")
@click.option(
    "--query",
    "query_text",
    help="Query text: its embedding (by the namespace's recorded embedder) and its escaped full-text form fill the statement's query parameters.",
)
@click.option("--namespace", envvar="KGRAG_NAMESPACE", show_envvar=True, help="Namespace (default: the file's example, 'demo').")
@click.option(
    "--param", "params", multiple=True, help="key=value (value parsed as JSON when it parses); wins over everything else."
)
@click.option(
    "--filter",
    "filters",
    multiple=True,
    help="document=ID[,ID], source=PREFIX, meta.KEY=VALUE, after=UNIX, before=UNIX: the $filter map.",
)
@click.option(
    "--embedder",
    envvar="KGRAG_EMBEDDER",
    show_envvar=True,
    help="Embed with this one instead of the namespace's recorded embedder (it must match it).",
)
@pass_app
@handle_errors
def params_cmd(app: AppContext, name, query_text, namespace, params, filters, embedder) -> None:
    """Print a ready-to-paste `:params {...}` line for a statement (for Neo4j Browser).

    Values come from the file's own example, then --namespace, --query, --filter and
    --param. Paste the line into Browser, run it, then paste the statement
    (`kgrag cypher show NAME`). Numbers reach the server as floats from Browser; the
    statements accept that.

    Example: kgrag cypher params graph/retrieve --namespace demo --query "how does expansion work?"
    """
    chosen = _statement_params(app, name, query_text, namespace, params, filters, embedder)
    click.echo(chosen.line)


@cypher.command("run")
@click.argument("name")
@click.option("--param", "params", multiple=True, help="key=value (value parsed as JSON when it parses).")
@click.option(
    "--query", "query_text", help="Query text for the statement's query vector and full-text query (as `cypher params --query`)."
)
@click.option("--namespace", envvar="KGRAG_NAMESPACE", show_envvar=True, help="Namespace (default: the file's example).")
@click.option(
    "--filter",
    "filters",
    multiple=True,
    help="document=ID[,ID], source=PREFIX, meta.KEY=VALUE, after=UNIX, before=UNIX: the $filter map.",
)
@click.option(
    "--embedder",
    envvar="KGRAG_EMBEDDER",
    show_envvar=True,
    help="Embed with this one instead of the namespace's recorded embedder (it must match it).",
)
@click.option("--json", "as_json", is_flag=True, help="Print rows as JSON (default).")
@pass_app
@handle_errors
def run(app: AppContext, name, params, query_text, namespace, filters, embedder, as_json) -> None:
    """Run one statement, routed by its mode; missing parameters take the file's example values.

    Which parameters came from the file is said on stderr. A statement that takes a query
    vector needs --query (or --param embedding=[...]).

    Example: kgrag cypher run documents/list_documents --param namespace=default --param limit=5
    """
    chosen = _statement_params(app, name, query_text, namespace, params, filters, embedder)
    if "embedding" in chosen.from_file:
        raise InputError(f"{name} takes a query vector: pass --query TEXT (or --param embedding=[...])")
    if chosen.from_file:
        click.echo(f"from the file's example: {', '.join(chosen.from_file)}", err=True)
    values = chosen.values
    ns = values.get("namespace")
    store = app.store(ns if isinstance(ns, str) and ns else "default")
    rows = store.runner.run_any(name, **values)
    emit_json([{key: _plain(value) for key, value in row.items()} for row in rows])


def _plain(value: Any) -> Any:
    """Nodes and relationships (graph/retrieve_graph returns them for Browser's graph view) as
    JSON maps of their properties, without the vectors."""
    # by shape: only store/ imports the driver
    if hasattr(value, "labels") and hasattr(value, "element_id"):
        return {"labels": sorted(value.labels), **{k: v for k, v in value.items() if not k.startswith("embedding")}}
    if hasattr(value, "start_node") and hasattr(value, "element_id"):
        ends = [getattr(node, "get", lambda _key: None)("id") for node in (value.start_node, value.end_node)]
        return {"type": value.type, "start": ends[0], "end": ends[1], **dict(value.items())}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _statement_params(app: AppContext, name, query_text, namespace, params, filters, embedder_name):
    from ..cypher_params import resolve_params
    from ..providers.select import select_embedder
    from .search_cmd import parse_filter

    return resolve_params(
        load_registry()[name],
        open_store=app.store,
        namespace=namespace,
        query_text=query_text,
        params=dict(parse_param(p) for p in params),
        filters=[parse_filter(f) for f in filters],
        embedder=select_embedder(embedder_name) if embedder_name else None,
    )
