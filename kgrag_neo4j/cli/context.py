"""What every CLI command shares: connection options, the lazily opened store, error output."""

from __future__ import annotations

import functools
import json
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Callable
from urllib.parse import urlsplit

import click

from ..errors import KgragError, ServerError
from ..settings import DEFAULT_NAMESPACE, Neo4jSettings

__all__ = ["AppContext", "connection_options", "emit_json", "handle_errors", "namespace_option", "pass_app"]


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
            click.option("--database", envvar="NEO4J_DATABASE", show_envvar=True, help="Database name (default: the server's default)."),
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


def handle_errors(fn: Callable) -> Callable:
    """Library errors become one line on stderr and exit code 1, never a traceback."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except KgragError as exc:
            raise click.ClickException(f"{type(exc).__name__}: {exc}") from None
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(130)

    return wrapper


def emit_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, ensure_ascii=False, default=str))
