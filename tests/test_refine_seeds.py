"""Refined seeds (``GraphOptions.refine_seeds``) and the vector stage's candidate count
(``vector_candidates``), on a real server: the options are checked, refused where the
per-hop loop cannot honour them, and refining finds nearest chunks the approximate index
missed while keeping every one it found, with the index's own scores."""

from __future__ import annotations

import numpy as np
import pytest

from kgrag_neo4j.errors import ConfigurationError
from kgrag_neo4j.options import GraphOptions
from kgrag_neo4j.retrieval.retrievers import GraphRetriever
from kgrag_neo4j.types import Chunk, ChunkEdge, Document, RelationType

from .conftest import TEST_DIMENSIONS

SEEDS = 10


def unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.linalg.norm(rows, axis=-1, keepdims=True)


@pytest.fixture
def near_copies(store):
    """3,000 chunks where an HNSW index asked for as few candidates as seeds misses about one
    exact neighbour in seven: 150 topics of 10 chunks, each with a near copy (a repeated
    paragraph), and every chunk joined by ``similar_to`` edges to its 5 exact nearest
    neighbours (what ``--similarity-edges`` writes)."""
    rng = np.random.default_rng(20261124)
    topics = unit(rng.standard_normal((150, TEST_DIMENSIONS)))
    base = np.repeat(topics, 10, axis=0) + 0.09 * rng.standard_normal((1500, TEST_DIMENSIONS))
    vectors = unit(np.concatenate([base, base + 0.02 * rng.standard_normal(base.shape)]))
    ids = [f"{store.namespace}-c{i:04d}" for i in range(len(vectors))]
    items = []
    for d in range(0, len(vectors), 500):
        doc = Document(id=f"{store.namespace}-d{d}", source=f"d{d}.txt", title="D", content="x", content_hash=f"h{d}")
        items.append(
            (
                doc,
                [
                    Chunk(id=ids[i], document_id=doc.id, content=f"chunk {i}", chunk_index=i - d, embedding=vectors[i].tolist())
                    for i in range(d, d + 500)
                ],
            )
        )
    assert store.store_documents(items) == ["new"] * len(items)
    sims = vectors @ vectors.T
    np.fill_diagonal(sims, -2.0)
    nearest = np.argpartition(-sims, 5, axis=1)[:, :5]
    assert (
        store.store_edges(
            [ChunkEdge(ids[i], ids[j], RelationType.SIMILAR_TO, float(sims[i, j])) for i in range(len(ids)) for j in nearest[i]]
        )
        > 0
    )
    return rng, topics, vectors, ids


def seed_scores(store, q: np.ndarray, **options) -> dict[str, float]:
    opts = GraphOptions(max_hops=0, seed_top_k=SEEDS, blend="seed", **options)
    return {r.id: r.scores.vector for r in store.graph_retrieve(q.tolist(), "", SEEDS, opts, ())}


def test_refining_finds_what_the_index_missed(store, near_copies):
    rng, topics, vectors, ids = near_copies
    plain_found = refined_found = 0
    for t in range(0, 150, 3):
        q = unit(topics[t] + 0.2 * rng.standard_normal(TEST_DIMENSIONS))
        exact = {ids[i] for i in np.argsort(-(vectors @ q))[:SEEDS]}
        plain = seed_scores(store, q, vector_candidates=SEEDS, refine_seeds=False)
        refined = seed_scores(store, q, vector_candidates=SEEDS, refine_seeds=True)
        assert seed_scores(store, q, vector_candidates=SEEDS) == refined  # on by default in one statement
        assert len(plain) == len(refined) == SEEDS
        # the best of a superset: every exact neighbour the index found is kept
        assert exact & set(plain) <= exact & set(refined)
        # a chunk scored by the index and by the statement's cosine scores the same
        for cid in set(plain) & set(refined):
            assert refined[cid] == pytest.approx(plain[cid], abs=1e-6)
        plain_found += len(exact & set(plain))
        refined_found += len(exact & set(refined))
    assert plain_found < 50 * SEEDS  # the index did miss some, or the test shows nothing
    assert refined_found > plain_found


def test_refining_changes_nothing_when_the_index_is_asked_for_enough(store, near_copies):
    rng, topics, vectors, ids = near_copies
    q = unit(topics[7] + 0.2 * rng.standard_normal(TEST_DIMENSIONS))
    exact = [ids[i] for i in np.argsort(-(vectors @ q))[:SEEDS]]
    refined = seed_scores(store, q, vector_candidates=1000)
    assert sorted(refined) == sorted(exact)
    assert refined == seed_scores(store, q, vector_candidates=1000, refine_seeds=False)


@pytest.mark.parametrize(
    "options, message",
    [
        (dict(refine_seeds="yes"), "refine_seeds"),
        (dict(vector_candidates=0), "vector_candidates"),
        (dict(vector_candidates=2.5), "vector_candidates"),
        (dict(vector_candidates=5, seed_top_k=10), "must be at least seed_top_k"),
    ],
)
def test_bad_options_are_refused_naming_them(options, message):
    with pytest.raises(ConfigurationError, match=message):
        GraphOptions(**options)


@pytest.mark.parametrize("retriever_options", [dict(native=False), dict(max_hops=5)])
@pytest.mark.parametrize("option", [dict(refine_seeds=True), dict(vector_candidates=50)])
def test_the_per_hop_loop_refuses_what_it_cannot_honour(store, hashing_embedder, retriever_options, option):
    with pytest.raises(ConfigurationError, match="one-statement graph retrieval"):
        GraphRetriever(store, hashing_embedder, **retriever_options, **option)


def test_the_per_hop_loop_runs_unrefined_by_default(store, hashing_embedder):
    retriever = GraphRetriever(store, hashing_embedder, native=False)
    assert retriever.options.refine_seeds is None and not retriever.uses_native
    assert GraphRetriever(store, hashing_embedder, native=False, refine_seeds=False).options.refine_seeds is False


def test_the_cli_takes_the_flags_in_graph_mode(kgrag_cli, namespace, tmp_path):
    (tmp_path / "a.md").write_text("Refined seeds find near copies.\n\nThe index is approximate.\n")
    ingest = kgrag_cli("ingest", str(tmp_path), "--namespace", namespace, "--embedder", "hashing", "--similarity-edges")
    assert ingest.exit_code == 0, ingest.output
    for flag in ("--refine-seeds", "--no-refine-seeds"):
        done = kgrag_cli(
            "search",
            "near copies",
            "--mode",
            "graph",
            flag,
            "--vector-candidates",
            "20",
            "--namespace",
            namespace,
            "--embedder",
            "hashing",
            "--json",
        )
        assert done.exit_code == 0, done.output
        assert "near copies" in done.output
    deep = kgrag_cli(
        "search", "x", "--mode", "graph", "--refine-seeds", "--hops", "5", "--namespace", namespace, "--embedder", "hashing"
    )
    assert deep.exit_code != 0 and "one-statement graph retrieval" in deep.stderr.strip().splitlines()[-1]
    too_few = kgrag_cli(
        "search", "x", "--mode", "graph", "--vector-candidates", "3", "--namespace", namespace, "--embedder", "hashing"
    )
    assert too_few.exit_code != 0 and "Traceback" not in too_few.output
    assert "vector_candidates (3) must be at least seed_top_k (10)" in too_few.stderr.strip().splitlines()[-1]
