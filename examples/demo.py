"""The main job on the embedded default: a local Neo4j started by the project, the offline
WordLlama embedder, the repository's own docs ingested with sequence and similarity edges,
entities (offline extractor) and their communities built, then a hybrid and a graph search
printed with their scores, and how to look at it all in Neo4j Browser.

    make demo            # or: python examples/demo.py [QUERY]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from kgrag_neo4j import GraphRetriever, HybridRetriever, IngestGraphOptions, Ingestor, LocalServer, Neo4jStore, format_knowledge
from kgrag_neo4j.ingestion.files import expand_paths
from kgrag_neo4j.providers.select import describe_embedder, select_embedder

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


def main() -> None:
    started = time.perf_counter()
    server = LocalServer()
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
            print(format_knowledge(retriever.retrieve(QUERY, 4), show_scores=True, max_chars=300))
    print(f"\ndone in {time.perf_counter() - started:.1f}s; the server keeps running:")
    print(f'  .venv/bin/kgrag search "{QUERY}" --namespace {NAMESPACE} --mode graph')
    print(f"  Neo4j Browser: {info.browser_url}  (log in with: .venv/bin/kgrag server credentials)")
    print(f'  a query vector for Browser: .venv/bin/kgrag cypher params graph/retrieve --namespace {NAMESPACE} --query "..."')
    print("  .venv/bin/kgrag server stop")


if __name__ == "__main__":
    main()
