"""The main job on the embedded default: a local Neo4j started by the project, the offline
WordLlama embedder, the repository's own docs ingested with sequence and similarity edges,
entities (offline extractor) and their communities built, then a hybrid and a graph search
printed with their scores, and how to look at it all in Neo4j Browser.

    make demo            # or: python examples/demo.py [QUERY]
    KGRAG_PORT=7787 make demo   # when 7687 is taken (Neo4j Desktop often holds it)

KGRAG_PORT, KGRAG_HTTP_PORT and KGRAG_DATA_DIR choose the server as they do for
`kgrag server start`.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from kgrag_neo4j import GraphRetriever, HybridRetriever, IngestGraphOptions, Ingestor, LocalServer, Neo4jStore, format_knowledge
from kgrag_neo4j.errors import KgragError
from kgrag_neo4j.ingestion.files import expand_paths
from kgrag_neo4j.loopback import port_is_free
from kgrag_neo4j.providers.select import describe_embedder, select_embedder
from kgrag_neo4j.server import DEFAULT_PORT

ROOT = Path(__file__).resolve().parent.parent
QUERY = " ".join(sys.argv[1:]) or "How does the graph retrieval expand from seed chunks?"
#: the namespace the demo writes; every cypher/ file's `browser:` example runs on it
NAMESPACE = "demo"


def ingest_demo(store, embedder, *, echo=print) -> dict:
    """Ingest docs/ and README.md into ``store``'s namespace, then build its entities and (when
    igraph and leidenalg are installed) communities. The Cypher files' Browser examples are
    written against what this makes (tests/test_browser_examples.py runs them on it)."""
    ingestor = Ingestor(store, embedder, graph=IngestGraphOptions(sequence_edges=True, similarity_edges=True))
    files = expand_paths([str(ROOT / "docs"), str(ROOT / "README.md")], extensions=(".md",))
    statuses: dict[str, int] = {}
    chunks = 0
    for path in files:
        r = ingestor.ingest_file(path, source=str(path.relative_to(ROOT)))
        statuses[r.status] = statuses.get(r.status, 0) + 1
        chunks += r.chunk_count
    echo(f"ingested {len(files)} files ({statuses}), {chunks} chunks")

    from kgrag_neo4j.entities.pipeline import build_entities

    built = build_entities(store, embedder)
    echo(f"entities: {built.entities} ({built.relations} relationships) from {built.chunks} chunks")
    summary = {"files": len(files), "chunks": chunks, "entities": built.entities, "communities": 0}
    from kgrag_neo4j.communities.build import build_communities
    from kgrag_neo4j.errors import ConfigurationError

    try:
        communities = build_communities(store)
    except ConfigurationError as exc:  # igraph / leidenalg not installed
        echo(f"communities: skipped ({exc})")
    else:
        summary["communities"] = communities.communities
        echo(f"communities: {communities.communities}")
    return summary


def env_port(name: str) -> int | None:
    """A port from the environment, as `kgrag server start` reads it (None when unset)."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    if not raw.isdigit() or not 1 <= int(raw) <= 65535:
        raise SystemExit(f"demo: {name} must be a port number (1-65535), got {raw!r}")
    return int(raw)


def start_server() -> LocalServer:
    """The local server on KGRAG_PORT when set. Without it, when the port a start would take is
    held by another program (a Neo4j Desktop on 7687), a free one is picked and said: the
    `kgrag` commands find the server by what its start recorded, whichever port that is."""
    server = LocalServer(port=env_port("KGRAG_PORT"), http_port=env_port("KGRAG_HTTP_PORT"))
    if server.port is None and not server.status().running:
        port = recorded_port(server) or DEFAULT_PORT
        if not port_is_free(port):
            free = next((p for p in range(DEFAULT_PORT + 100, DEFAULT_PORT + 200) if port_is_free(p)), None)
            if free is None:
                raise SystemExit(f"demo: port {port} on 127.0.0.1 is taken; choose a free one: KGRAG_PORT=N make demo")
            print(
                f"demo: port {port} on 127.0.0.1 is taken by another program (a Neo4j Desktop?); "
                f"starting on {free} instead (KGRAG_PORT=N make demo chooses)",
                file=sys.stderr,
            )
            server = LocalServer(port=free, http_port=server.http_port)
    return server


def recorded_port(server: LocalServer) -> int | None:
    """The port the server's last start recorded, which a start without a port reuses."""
    try:
        port = json.loads(server.state_path.read_text()).get("port")
    except (OSError, ValueError, AttributeError):
        return None
    return port if isinstance(port, int) else None


def main() -> None:
    started = time.perf_counter()
    try:
        run(started)
    except KgragError as exc:  # a server that cannot start, a database that fails: one line
        raise SystemExit(f"demo: {type(exc).__name__}: {exc}") from None


def run(started: float) -> None:
    server = start_server()
    info = server.start(echo=lambda m: print(m, file=sys.stderr))
    print(f"Neo4j {info.version} at {info.uri} (data in {info.data_dir})")
    embedder = select_embedder("wordllama")
    print(f"embedder: {describe_embedder(embedder)}")
    with Neo4jStore.connect(info.settings(), namespace=NAMESPACE) as store:
        ingest_demo(store, embedder)
        for title, retriever in (
            ("hybrid (vector + full-text, RRF)", HybridRetriever(store, embedder)),
            ("graph (2 hops, one Cypher statement)", GraphRetriever(store, embedder, max_hops=2, bidirectional=True)),
        ):
            print(f"\n=== {title}: {QUERY!r}\n")
            print(format_knowledge(retriever.retrieve(QUERY, 4), show_scores=True, show_ids=True, max_chars=300))
    print(f"\ndone in {time.perf_counter() - started:.1f}s; the server keeps running:")
    print(f'  .venv/bin/kgrag search "{QUERY}" --namespace {NAMESPACE} --mode graph')
    print(f"  .venv/bin/kgrag chunks show CHUNK_ID --namespace {NAMESPACE}   # a chunk printed above: text, edges, entities")
    print(f"  Neo4j Browser: {info.browser_url}  (log in with: .venv/bin/kgrag server credentials)")
    print(f'  a query vector for Browser: .venv/bin/kgrag cypher params graph/retrieve --namespace {NAMESPACE} --query "..."')
    print("  .venv/bin/kgrag server stop")


if __name__ == "__main__":
    main()
