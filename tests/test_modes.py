"""``retrieval.modes.search``: the retriever of a mode, built and run in one call (what
``kgrag search`` calls), against the real server."""

from __future__ import annotations

import pytest

from kgrag_neo4j.entities.pipeline import build_entities
from kgrag_neo4j.errors import ConfigurationError, InputError
from kgrag_neo4j.ingestion.ingestor import Ingestor
from kgrag_neo4j.options import IngestGraphOptions
from kgrag_neo4j.retrieval.modes import MODES, SearchResponse, build_retriever, search

QUERY = "Ned Stark Winterfell"


@pytest.fixture
def corpus(store, hashing_embedder):
    ingestor = Ingestor(store, hashing_embedder, graph=IngestGraphOptions(sequence_edges=True))
    for source, text in (
        ("north.txt", "Ned Stark rules Winterfell in the north. Winterfell is cold."),
        ("south.txt", "Ned Stark rides south to Kings Landing with his daughters."),
    ):
        ingestor.ingest_text(text, source)
    build_entities(store, hashing_embedder)  # for the entity, local and ppr modes
    return store


@pytest.mark.parametrize("mode", MODES)
def test_search_returns_what_the_modes_retriever_returns(corpus, hashing_embedder, mode):
    response = search(mode, corpus, hashing_embedder, QUERY, 3)
    expected = build_retriever(mode, corpus, hashing_embedder).retrieve(QUERY, 3)
    assert isinstance(response, SearchResponse) and response.mode == mode
    assert [r.id for r in response.results] == [r.id for r in expected]
    assert response.results, mode
    body = response.to_json()
    assert [r["id"] for r in body["results"]] == [r.id for r in expected]
    # only local search has a context to show: its entities, relationships and reports
    assert (response.context is not None) == (mode == "local")
    assert ("entities" in body) == (mode == "local")
    text = response.to_text()
    assert ("## Entities" in text) == (mode == "local")


def test_search_passes_options_and_refuses_what_the_mode_cannot_honour(corpus, hashing_embedder):
    # no hops, one seed, and no entity seeds (the seed blend): the one seed only
    seeds = search("graph", corpus, hashing_embedder, QUERY, 5, max_hops=0, seed_top_k=1, blend="seed")
    assert len(seeds.results) == 1
    assert len(search("graph", corpus, hashing_embedder, QUERY, 5, max_hops=1).results) == 2
    with pytest.raises(ConfigurationError, match="max_hops"):
        search("vector", corpus, hashing_embedder, QUERY, 5, max_hops=1)
    with pytest.raises(ConfigurationError, match="unknown mode"):
        search("nearest", corpus, hashing_embedder, QUERY, 5)


@pytest.mark.parametrize("mode", ["local", "vector"])
def test_search_refuses_a_top_k_below_one_in_every_mode(corpus, hashing_embedder, mode):
    with pytest.raises(InputError, match="top_k"):
        search(mode, corpus, hashing_embedder, QUERY, 0)
