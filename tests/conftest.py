"""Test fixtures: a real Neo4j for the whole run, a fresh namespace per test.

Where the server comes from, in order: ``NEO4J_URI`` (with ``NEO4J_USERNAME`` /
``NEO4J_PASSWORD``) when set; a testcontainers ``neo4j:5.26`` when a Docker engine answers;
otherwise a disposable local server from the official jars (``kgrag_neo4j.server``). With
``KGRAG_TEST_NEO4J_VERSION`` set (e.g. 2025.10.1) both run that version instead.
Nothing here mocks Neo4j.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

from kgrag_neo4j.neo4j_release import release
from kgrag_neo4j.settings import Neo4jSettings
from kgrag_neo4j.store import Neo4jStore
from kgrag_neo4j.store.runner import connect_driver

# a user's own defaults for the commands (their embedder, model, namespace) would change what
# the CLI tests run: each test names what it needs
for _setting in ("KGRAG_EMBEDDER", "KGRAG_LLM", "KGRAG_NAMESPACE"):
    os.environ.pop(_setting, None)

#: every test database gets vectors of this length (the hashing and WordLlama embedders' size)
TEST_DIMENSIONS = 256
#: the Neo4j version of the servers a run starts (default: the LTS); `make test` runs the
#: calendar-release subset with it set to kgrag_neo4j.neo4j_release.NEO4J_CALVER_VERSION
TEST_NEO4J_VERSION = os.environ.get("KGRAG_TEST_NEO4J_VERSION") or None


def _docker_available() -> bool:
    if os.environ.get("KGRAG_TEST_DOCKER", "auto") == "never":
        return False
    try:
        import docker  # type: ignore[import-not-found]

        client = docker.from_env(timeout=3)
        client.ping()
        return True
    except Exception:
        return False


@pytest.fixture(scope="session")
def neo4j_settings(tmp_path_factory) -> Iterator[Neo4jSettings]:
    if os.environ.get("NEO4J_URI"):
        yield Neo4jSettings.from_env()
        return
    if _docker_available():
        from testcontainers.neo4j import Neo4jContainer  # type: ignore[import-not-found]

        with Neo4jContainer(f"neo4j:{TEST_NEO4J_VERSION or '5.26'}", password="kgrag-test-pw") as container:
            yield Neo4jSettings(uri=container.get_connection_url(), user="neo4j", password="kgrag-test-pw")
        return
    from kgrag_neo4j.server import disposable_server

    with disposable_server(version=TEST_NEO4J_VERSION) as server:
        settings = server.status().settings()
        if TEST_NEO4J_VERSION and release(TEST_NEO4J_VERSION).cypher_25:
            _default_to_cypher_25(settings)
        yield settings


def _default_to_cypher_25(settings: Neo4jSettings) -> None:
    """Run the calendar-release tests in Cypher 25, the language new databases get from 2026.02
    (and Aura instances when switched): tests/test_registry.py EXPLAINs every file in Cypher 5 too."""
    with connect_driver(settings) as drv:
        drv.execute_query("ALTER DATABASE neo4j SET DEFAULT LANGUAGE CYPHER 25", database_="system")


@pytest.fixture(scope="session")
def driver(neo4j_settings):
    """The session's driver. The server it reaches holds another tenant's data for the whole
    run (red-team finding 16: the suite must pass on a server that is not empty), and the run
    fails if a test leaves a namespace behind."""
    drv = connect_driver(neo4j_settings)
    before = _namespaces(drv, neo4j_settings.database)
    foreign = Neo4jStore(drv, namespace=FOREIGN_NAMESPACE, database=neo4j_settings.database)
    foreign.init_schema(TEST_DIMENSIONS, model="unknown")
    _fill_foreign(foreign)
    try:
        yield drv
        foreign.delete_namespace()
        check_no_namespace_left(drv, neo4j_settings, before)
    finally:
        drv.close()


@pytest.fixture(scope="session")
def schema_ready(driver, neo4j_settings) -> int:
    store = Neo4jStore(driver, namespace="kgrag-test-schema", database=neo4j_settings.database)
    store.init_schema(TEST_DIMENSIONS, model="unknown")
    return TEST_DIMENSIONS


#: this run's mark, in the name of every namespace a test makes: a run on a server that others
#: use too can tell what it left behind
RUN = uuid.uuid4().hex[:6]


def new_namespace(prefix: str = "t") -> str:
    """A namespace name no other test (or run) uses."""
    return f"{prefix}-{RUN}-{uuid.uuid4().hex[:8]}"


def delete_namespaces(driver, database: str | None, names) -> None:
    for name in names:
        Neo4jStore(driver, namespace=name, database=database).delete_namespace()


@pytest.fixture
def make_namespace(driver, neo4j_settings):
    """``make_namespace(prefix="t")``: a fresh namespace name, deleted after the test."""
    made: list[str] = []

    def make(prefix: str = "t") -> str:
        made.append(new_namespace(prefix))
        return made[-1]

    yield make
    delete_namespaces(driver, neo4j_settings.database, made)


@pytest.fixture
def namespace(make_namespace) -> str:
    """The test's own namespace; everything in it is deleted after the test."""
    return make_namespace()


@pytest.fixture
def store(driver, neo4j_settings, schema_ready, namespace) -> Iterator[Neo4jStore]:
    """A store on the shared server in a namespace of its own."""
    # settings: the async reads (aretrieve) open their own AsyncDriver per event loop
    s = Neo4jStore(driver, namespace=namespace, database=neo4j_settings.database, settings=neo4j_settings)
    yield s
    s.close()


@pytest.fixture
def kgrag_cli(neo4j_settings, schema_ready):
    """``kgrag_cli(*args, input=None, connect=True)``: the CLI in-process against the test server
    (``connect=False``: without the connection options), returning click's ``Result``. Any
    exception other than an exit fails the test: the CLI must never end in a traceback."""
    from click.testing import CliRunner

    from kgrag_neo4j.cli import cli

    def invoke(*args: str, input: str | None = None, connect: bool = True):
        base: list[str] = []
        if connect:
            base = ["--uri", neo4j_settings.uri, "--user", neo4j_settings.user]
            if neo4j_settings.password:
                base += ["--password", neo4j_settings.password]
            if neo4j_settings.database:
                base += ["--database", neo4j_settings.database]
        result = CliRunner().invoke(cli, base + list(args), input=input)
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise AssertionError(f"kgrag {' '.join(args)[:200]} raised {type(result.exception).__name__}") from result.exception
        return result

    return invoke


@pytest.fixture
def hashing_embedder():
    from kgrag_neo4j.providers.hashing import HashingEmbedder

    return HashingEmbedder(dimensions=TEST_DIMENSIONS)


@pytest.fixture(scope="session")
def own_server(tmp_path_factory):
    """A local server of the reliability tests' own (free port, temp dir), started on first
    use. Tests may kill and restart it; the shared server above is never touched."""
    import shutil

    from kgrag_neo4j.loopback import free_port
    from kgrag_neo4j.server import LocalServer

    data_dir = tmp_path_factory.mktemp("own-neo4j")
    # its own HTTP port too: the default 7474 is shared by every suite on the machine, and one
    # taken between the check and Neo4j's bind failed the start of this server (and its tests)
    port = free_port()
    http_port = free_port()
    while http_port == port:
        http_port = free_port()
    server = LocalServer(data_dir, port=port, http_port=http_port, heap="512m", pagecache="64m", version=TEST_NEO4J_VERSION)
    server.start(timeout=300)
    yield server
    server.stop(timeout=30)
    shutil.rmtree(data_dir, ignore_errors=True)


def load_demo():
    """examples/demo.py as a module (it is a script, not part of the package)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "examples" / "demo.py"
    spec = importlib.util.spec_from_file_location("kgrag_demo", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def demo_server(tmp_path_factory):
    """A local server of its own (free Bolt and HTTP ports, so Neo4j Browser too) holding what
    `make demo` makes: the docs ingested as namespace ``demo`` with entities and communities
    (examples/demo.py). The ``browser:`` examples of cypher/ are written against it; being
    this server's own, the namespace is the demo's real one."""
    import shutil

    from kgrag_neo4j.loopback import free_port
    from kgrag_neo4j.providers.select import select_embedder
    from kgrag_neo4j.server import LocalServer

    demo = load_demo()
    data_dir = tmp_path_factory.mktemp("demo-neo4j")
    port = free_port()
    http_port = free_port()
    while http_port == port:
        http_port = free_port()
    server = LocalServer(data_dir, port=port, http_port=http_port, heap="512m", pagecache="64m", version=TEST_NEO4J_VERSION)
    server.start(timeout=300)
    try:
        with Neo4jStore.connect(server.status().settings(), namespace=demo.NAMESPACE) as store:
            demo.ingest_demo(store, select_embedder("wordllama"), echo=lambda _m: None)
        yield server
    finally:
        server.stop(timeout=30)
        shutil.rmtree(data_dir, ignore_errors=True)


# -- the suite runs on a server that holds other data, and leaves nothing behind --------------------


#: the other tenant every run shares its server with (near-duplicates of the tests' own data)
FOREIGN_NAMESPACE = f"foreign-{RUN}"
#: namespaces a run may leave: the schema fixture's model record
KEPT = {"kgrag-test-schema"}


def _fill_foreign(store: Neo4jStore) -> None:
    """Data like the tests': the same words and names, in more chunks than any fetch_k, with
    entities, communities and triples, embedded with the tests' own embedder."""
    from kgrag_neo4j.communities.build import build_communities
    from kgrag_neo4j.entities.pipeline import build_entities
    from kgrag_neo4j.ingestion.chunkers import RecursiveChunker
    from kgrag_neo4j.ingestion.ingestor import Ingestor
    from kgrag_neo4j.options import IngestGraphOptions
    from kgrag_neo4j.providers.hashing import HashingEmbedder
    from kgrag_neo4j.types.triples import Triple

    words = (
        "Ned Stark rules Winterfell with Catelyn Stark. Robert Baratheon rides north. "
        "Cersei Lannister plots in Kings Landing. Neo4j vector index, graph retrieval, alpha beta gamma. "
        "The river flows past the mill; bridges, harbours and railways. Some text about quokka migration."
    )
    ingestor = Ingestor(
        store,
        HashingEmbedder(dimensions=TEST_DIMENSIONS),
        chunker=RecursiveChunker(max_tokens=24, overlap_tokens=0),
        graph=IngestGraphOptions(sequence_edges=True),
    )
    for i in range(12):
        ingestor.ingest_text("\n\n".join(f"{words} Part {i}.{k}." for k in range(6)), f"foreign/{i}.txt", f"Foreign {i}")
    build_entities(store, HashingEmbedder(dimensions=TEST_DIMENSIONS))
    build_communities(store, levels=1, min_size=2)
    store.add_triples([Triple("error:timeout", "caused_by", "tool:http_client"), Triple("Ned Stark", "related_to", "Winterfell")])


def _namespaces(driver, database: str | None) -> set[str]:
    probe = Neo4jStore(driver, namespace="kgrag-test-schema", database=database)
    return {n.namespace for n in probe.list_namespaces()}


def check_no_namespace_left(driver, settings, before: set[str]) -> None:
    """Fail the run when a test left a namespace behind (deleting them, so the next run starts
    clean). On a server of its own every new namespace is this run's; on a server others use
    (``NEO4J_URI``) only those carrying this run's mark are."""
    left = _namespaces(driver, settings.database) - before - KEPT
    mine = sorted(n for n in left if RUN in n or not os.environ.get("NEO4J_URI"))
    if mine:
        delete_namespaces(driver, settings.database, mine)
        pytest.fail(f"tests left {len(mine)} namespace(s) behind: {', '.join(map(repr, mine[:20]))}", pytrace=False)
