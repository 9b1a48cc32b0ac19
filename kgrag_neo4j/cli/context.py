"""What every CLI command shares: connection options, the lazily opened store, error output."""

from __future__ import annotations

import functools
import json
import math
import os
import sys
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import click

from ..errors import KgragError, ServerError
from ..settings import DEFAULT_NAMESPACE, Neo4jSettings

__all__ = [
    "FINITE_FLOAT",
    "AppContext",
    "connection_options",
    "emit_json",
    "given",
    "handle_errors",
    "namespace_option",
    "pass_app",
    "printable",
    "refuse_unused",
]


@dataclass
class AppContext:
    uri: str | None = None
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    database: str | None = None
    data_dir: str | None = None
    _stores: list = field(default_factory=list, repr=False)

    def settings(self) -> Neo4jSettings:
        """Options, then NEO4J_* variables, then the local server `kgrag server start` runs.

        A URI naming the local server without a password gets the local server's password; a
        password or user given for the local server must be its own (refused otherwise)."""
        from ..server import LocalServer

        uri = self.uri or os.environ.get("NEO4J_URI")
        if uri:
            settings = Neo4jSettings.from_env(uri=uri, user=self.user, password=self.password, database=self.database)
            if settings.password is None:
                local = LocalServer(self.data_dir).status()
                if local.running and _same_endpoint(settings.uri, local.uri):
                    settings = settings.with_(password=local.password)
            return settings
        server = LocalServer(self.data_dir)
        info = server.status()
        if not info.running:
            raise ServerError(
                "no Neo4j to talk to: set NEO4J_URI (and NEO4J_PASSWORD), pass --uri, "
                "or start the local server with `kgrag server start`"
            )
        server.check_password(self.password)
        if self.user and self.user != info.user:
            raise ServerError(
                f"the local server's user is {info.user!r}, not {self.user!r} (--user or NEO4J_USERNAME); "
                "unset it, or point NEO4J_URI at the server it belongs to"
            )
        return info.settings(database=self.database or os.environ.get("NEO4J_DATABASE") or None)

    def local_server_password(self) -> str | None:
        """The password given for the local server: none when a URI names another server
        (the password is that server's)."""
        uri = self.uri or os.environ.get("NEO4J_URI")
        if uri and urlsplit(uri).hostname not in _LOOPBACK:
            return None
        return self.password

    def store(self, namespace: str):
        from ..store import Neo4jStore

        if self._stores:
            return self._stores[0].with_namespace(namespace)
        store = Neo4jStore.connect(self.settings(), namespace=namespace)
        self._stores.append(store)
        return store

    def close(self) -> None:
        for s in self._stores:
            s.close()
        self._stores.clear()


_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def _same_endpoint(uri: str, local_uri: str | None) -> bool:
    """Whether ``uri`` reaches the local server (any scheme, loopback host, same port)."""
    if not local_uri:
        return False
    given, local = urlsplit(uri), urlsplit(local_uri)
    return given.hostname in _LOOPBACK and given.port == local.port


pass_app = click.make_pass_decorator(AppContext, ensure=True)


def connection_options(fn: Callable) -> Callable:
    for opt in reversed(
        [
            click.option("--uri", envvar="NEO4J_URI", show_envvar=True, help="Bolt or neo4j:// URI (default: the local server)."),
            click.option("--user", envvar="NEO4J_USERNAME", show_envvar=True, help="User name."),
            click.option("--password", envvar="NEO4J_PASSWORD", show_envvar=True, help="Password (prefer the variable)."),
            click.option(
                "--database", envvar="NEO4J_DATABASE", show_envvar=True, help="Database name (default: the server's default)."
            ),
        ]
    ):
        fn = opt(fn)
    return fn


def namespace_option(fn: Callable) -> Callable:
    return click.option(
        "--namespace",
        envvar="KGRAG_NAMESPACE",
        show_envvar=True,
        default=DEFAULT_NAMESPACE,
        show_default=True,
        help="Tenant / collection every read and write is scoped to.",
    )(fn)


def given(ctx: click.Context, name: str) -> bool:
    """Whether the user set option ``name`` (command line or environment), not its default."""
    from click.core import ParameterSource

    return ctx.get_parameter_source(name) in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT)


def refuse_unused(ctx: click.Context, names: tuple[str, ...], needs: str, on: bool) -> None:
    """Options of ``names`` the user set while the flag they tune is off (``on`` false) are a
    usage error naming ``needs``: a flag that cannot be honoured is never silently ignored."""
    unused = [name for name in names if given(ctx, name)] if not on else []
    if unused:
        raise click.UsageError(", ".join("--" + n.replace("_", "-") for n in unused) + f" need(s) {needs}")


def handle_errors(fn: Callable) -> Callable:
    """Library errors become one line on stderr and exit code 1, never a traceback."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except KgragError as exc:
            raise click.ClickException(f"{type(exc).__name__}: {printable(exc)}") from None
        except (OverflowError, RecursionError, UnicodeError) as exc:
            # input no check foresaw (a number past 64 bits, nesting, text that is not UTF-8)
            raise click.ClickException(f"InputError: {printable(_first_line(exc))}") from None
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(130)

    return wrapper


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class _FiniteFloat(click.ParamType):
    """A float option that refuses nan and infinity (every comparison with nan is false, so
    ``--min-score nan`` would quietly drop every result)."""

    name = "float"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        number = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


FINITE_FLOAT = _FiniteFloat()


def emit_json(value: Any) -> None:
    text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    # a lone surrogate (a file name that is not UTF-8) cannot be written as UTF-8; its JSON
    # escape \udcXX is what backslashreplace writes, so the output stays valid JSON
    click.echo(text.encode("utf-8", "backslashreplace").decode("utf-8"))


#: categories shown escaped in text output: controls, format (bidi, zero-width), surrogates,
#: line and paragraph separators. A name holding them could forge lines or hide its ending.
_HIDDEN = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def printable(text: Any) -> str:
    """``text`` for a terminal: characters that could move the cursor, colour the output,
    start a new line or reorder what follows are shown as escapes (``\\x1b``, ``\\n``,
    ``\\u202e``); everything else as it is."""
    value = str(text)
    if all(ch.isprintable() and unicodedata.category(ch) not in _HIDDEN for ch in value):
        return value
    out = []
    for ch in value:
        if ch == " " or (ch.isprintable() and unicodedata.category(ch) not in _HIDDEN):
            out.append(ch)
        else:
            out.append(ch.encode("unicode_escape", "backslashreplace").decode("ascii"))
    return "".join(out)
