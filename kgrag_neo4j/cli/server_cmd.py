"""``kgrag server install|start|stop|status|credentials``: the local Neo4j from the official
jars, with Neo4j Browser on its HTTP port."""

from __future__ import annotations

import click

from .context import FINITE_FLOAT, AppContext, emit_json, handle_errors, pass_app


def _server(
    app: AppContext,
    data_dir: str | None,
    port: int | None = None,
    heap=None,
    pagecache=None,
    http_port=None,
    vector_merge_factor: int | None = None,
    version: str | None = None,
):
    from ..server import LocalServer

    return LocalServer(
        data_dir or app.data_dir,
        port=port,
        http_port=http_port,
        heap=heap,
        pagecache=pagecache,
        vector_merge_factor=vector_merge_factor,
        version=version,
    )


def _check_version(_ctx, _param, value: str | None) -> str | None:
    from ..errors import ServerError
    from ..neo4j_release import release

    if value is None:
        return None
    try:
        return release(value).version
    except ServerError as exc:
        raise click.BadParameter(str(exc)) from None


def _version_option(help_text: str):
    return click.option(
        "--neo4j-version",
        "neo4j_version",
        envvar="KGRAG_NEO4J_VERSION",
        show_envvar=True,
        metavar="VERSION",
        callback=_check_version,
        help=help_text,
    )


@click.group()
def server() -> None:
    """Run a local Neo4j (5.26 LTS, or a 2025.x release) on 127.0.0.1 from the official jars (no Docker)."""


@server.command("install")
@_version_option("Neo4j version to resolve: 5.26.x or a calendar release such as 2025.10.1 (default: the pinned 5.26).")
@handle_errors
def install_cmd(neo4j_version) -> None:
    """Resolve the pinned Neo4j server and Neo4j Browser jars with Maven into the cache (idempotent).

    Each version has its own folder in the cache.

    Example: kgrag server install --neo4j-version 2025.10.1
    """
    from ..neo4j_jars import install
    from ..neo4j_release import BROWSER_VERSION, NEO4J_VERSION

    version = neo4j_version or NEO4J_VERSION
    lib = install(version, echo=lambda m: click.echo(m, err=True))
    click.echo(f"Neo4j {version} and Neo4j Browser {BROWSER_VERSION} jars in {lib}")


@server.command("start")
@click.option(
    "--port",
    type=click.IntRange(1, 65535),
    envvar="KGRAG_PORT",
    show_envvar=True,
    help="Bolt port on 127.0.0.1 (default 7687, or the last one used).",
)
@click.option(
    "--http-port",
    "http_port",
    type=click.IntRange(1, 65535),
    envvar="KGRAG_HTTP_PORT",
    show_envvar=True,
    help="HTTP port of Neo4j Browser on 127.0.0.1 (default 7474 or the last one used; a free one when that is taken).",
)
@click.option("--data-dir", "data_dir", help="Where data, logs and server.json live.")
@click.option("--heap", help="JVM max heap, e.g. 1g (env KGRAG_NEO4J_HEAP).")
@click.option("--pagecache", help="Page cache size, e.g. 256m (env KGRAG_NEO4J_PAGECACHE).")
@click.option(
    "--vector-merge-factor",
    "vector_merge_factor",
    type=click.IntRange(2, 1000),
    help="Merge a vector index's segments this many at a time (Neo4j's default 50; 10 answers a large index "
    "several times faster, but see docs/operations.md for the cost) (env KGRAG_NEO4J_VECTOR_MERGE_FACTOR).",
)
@_version_option(
    "Neo4j to run: 5.26.x (Java 17 or 21) or a calendar release such as 2025.10.1 (Java 21; 25 from 2025.10) "
    "(default: the version the data dir holds, else the pinned 5.26). A data dir keeps its version."
)
@click.option("--timeout", type=FINITE_FLOAT, default=120.0, show_default=True, help="Seconds to wait for Bolt and HTTP.")
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON (as `server status --json`).")
@pass_app
@handle_errors
def start(
    app: AppContext, port, http_port, data_dir, heap, pagecache, vector_merge_factor, neo4j_version, timeout, as_json
) -> None:
    """Start the local server (installing the jars if needed) and print its URI.

    The Neo4j Browser URL goes to stderr (`kgrag server credentials` prints the login).
    The first start sets the password given with --password or NEO4J_PASSWORD (at least 8
    characters), else a generated one; later starts refuse a different one. Starting when
    one is already running prints the running one.

    Example: kgrag server start --port 7687
    """
    srv = _server(app, data_dir, port, heap, pagecache, http_port, vector_merge_factor=vector_merge_factor, version=neo4j_version)
    before = srv.status()
    info = srv.start(timeout=timeout, echo=lambda m: click.echo(m, err=True), password=app.local_server_password())
    if before.running:
        click.echo(f"already running: {info.uri} (pid {info.pid})", err=True)
        if port and info.uri != f"bolt://127.0.0.1:{port}":
            click.echo(f"note: --port {port} is not used: the running server keeps its port", err=True)
    if as_json:
        emit_json(info.public_dict())
        return
    click.echo(f"Neo4j Browser: {info.browser_url} (login: kgrag server credentials)", err=True)
    click.echo(info.uri)


@server.command("stop")
@click.option("--data-dir", "data_dir", help="Data dir of the server to stop.")
@pass_app
@handle_errors
def stop(app: AppContext, data_dir) -> None:
    """Stop the local server cleanly (SIGTERM, wait, then SIGKILL).

    Example: kgrag server stop
    """
    if _server(app, data_dir).stop():
        click.echo("stopped")
    else:
        click.echo("not running")


@server.command("status")
@click.option("--data-dir", "data_dir", help="Data dir of the server.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
@handle_errors
def status(app: AppContext, data_dir, as_json) -> None:
    """Print whether the local server runs, its URI, Neo4j Browser URL, version, pid and data dir.

    Example: kgrag server status --json
    """
    info = _server(app, data_dir).status().public_dict()
    if as_json:
        emit_json(info)
        return
    for key, value in info.items():
        click.echo(f"{key:11} {value}")


@server.command("credentials")
@click.option("--data-dir", "data_dir", help="Data dir of the server.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: uri, user, password, browser_url.")
@pass_app
@handle_errors
def credentials(app: AppContext, data_dir, as_json) -> None:
    """Print the user and password of the running local server (for the Neo4j Browser login).

    The only command that prints the password. For other tools:
    export NEO4J_PASSWORD=$(kgrag server credentials --json | jq -r .password)

    Example: kgrag server credentials
    """
    creds = _server(app, data_dir).status().credentials()
    if as_json:
        emit_json(creds)
        return
    for key in ("browser_url", "uri", "user", "password"):
        click.echo(f"{key:11} {creds[key]}")
