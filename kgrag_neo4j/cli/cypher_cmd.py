"""``kgrag cypher list|show|run``: the statement files, usable without Python."""

from __future__ import annotations

import json

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
    try:
        value = json.loads(raw)
    except ValueError:
        value = raw
    return key, value


def register(cli: click.Group) -> None:
    @cli.group()
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

    @cypher.command("run")
    @click.argument("name")
    @click.option("--param", "params", multiple=True, help="key=value (value parsed as JSON when it parses).")
    @click.option("--json", "as_json", is_flag=True, help="Print rows as JSON (default).")
    @pass_app
    @handle_errors
    def run(app: AppContext, name, params, as_json) -> None:
        """Run one statement with parameters, routed by its mode.

        Example: kgrag cypher run documents/list_documents --param namespace=default --param limit=5
        """
        values = dict(parse_param(p) for p in params)
        store = app.store(values.get("namespace") if isinstance(values.get("namespace"), str) else "default")
        rows = store.runner.run_any(name, **values)
        emit_json(rows)
