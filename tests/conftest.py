"""Test fixtures: a real Neo4j for the whole run, a fresh namespace per test.

Where the server comes from, in order: ``NEO4J_URI`` (with ``NEO4J_USERNAME`` /
``NEO4J_PASSWORD``) when set; a testcontainers ``neo4j:5.26`` when a Docker engine answers;
otherwise a disposable local server from the official jars (``kgrag_neo4j.server``).
Nothing here mocks Neo4j.
"""

from __future__ import annotations

import os
import uuid
from typing import Iterator

import pytest

from kgrag_neo4j.settings import Neo4jSettings
from kgrag_neo4j.store import Neo4jStore
from kgrag_neo4j.store.runner import connect_driver

#: every test database gets vectors of this length (the hashing and WordLlama embedders' size)
TEST_DIMENSIONS = 256


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

        with Neo4jContainer("neo4j:5.26", password="kgrag-test-pw") as container:
            yield Neo4jSettings(uri=container.get_connection_url(), user="neo4j", password="kgrag-test-pw")
        return
    from kgrag_neo4j.server import disposable_server

    with disposable_server() as server:
        yield server.status().settings()


@pytest.fixture(scope="session")
def driver(neo4j_settings):
    drv = connect_driver(neo4j_settings)
    yield drv
    drv.close()


@pytest.fixture(scope="session")
def schema_ready(driver, neo4j_settings) -> int:
    store = Neo4jStore(driver, namespace="kgrag-test-schema", database=neo4j_settings.database)
    store.init_schema(TEST_DIMENSIONS, model="unknown")
    return TEST_DIMENSIONS


@pytest.fixture
def namespace() -> str:
    return "t-" + uuid.uuid4().hex[:12]


@pytest.fixture
def store(driver, neo4j_settings, schema_ready, namespace) -> Iterator[Neo4jStore]:
    """A store on the shared server in a namespace of its own."""
    # settings: the async reads (aretrieve) open their own AsyncDriver per event loop
    s = Neo4jStore(driver, namespace=namespace, database=neo4j_settings.database, settings=neo4j_settings)
    yield s
    s.close()


@pytest.fixture
def hashing_embedder():
    from kgrag_neo4j.providers.hashing import HashingEmbedder

    return HashingEmbedder(dimensions=TEST_DIMENSIONS)


@pytest.fixture(scope="session")
def own_server(tmp_path_factory):
    """A local server of the reliability tests' own (free port, temp dir), started on first
    use. Tests may kill and restart it; the shared server above is never touched."""
    import shutil

    from kgrag_neo4j.server import LocalServer, free_port

    data_dir = tmp_path_factory.mktemp("own-neo4j")
    server = LocalServer(data_dir, port=free_port(), heap="512m", pagecache="64m")
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

    from kgrag_neo4j.providers.select import select_embedder
    from kgrag_neo4j.server import LocalServer, free_port

    demo = load_demo()
    data_dir = tmp_path_factory.mktemp("demo-neo4j")
    port = free_port()
    http_port = free_port()
    while http_port == port:
        http_port = free_port()
    server = LocalServer(data_dir, port=port, http_port=http_port, heap="512m", pagecache="64m")
    server.start(timeout=300)
    try:
        with Neo4jStore.connect(server.status().settings(), namespace=demo.NAMESPACE) as store:
            demo.ingest_demo(store, select_embedder("wordllama"), echo=lambda _m: None)
        yield server
    finally:
        server.stop(timeout=30)
        shutil.rmtree(data_dir, ignore_errors=True)
