"""The option bags: one home (``kgrag_neo4j.options``), keyword-only and frozen, valid once made,
re-exported where they used to live, and passed whole to the store's graph traversal."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from kgrag_neo4j import options
from kgrag_neo4j.errors import ConfigurationError
from kgrag_neo4j.options import GraphOptions, IngestGraphOptions, IngestOptions, PPROptions
from kgrag_neo4j.protocols import GraphTraverser
from kgrag_neo4j.store import Neo4jStore
from kgrag_neo4j.types import RelationType

BAGS = (GraphOptions, PPROptions, IngestGraphOptions, IngestOptions)


@pytest.mark.parametrize("bag", BAGS, ids=lambda b: b.__name__)
def test_keyword_only_and_frozen(bag):
    with pytest.raises(TypeError):
        bag(1)  # positional values would bind by field order: refused
    made = bag()
    field = dataclasses.fields(bag)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(made, field, getattr(made, field))


@pytest.mark.parametrize(
    "old_module, name",
    [
        ("kgrag_neo4j.retrieval.scoring", "GraphOptions"),
        ("kgrag_neo4j.retrieval.scoring", "DEFAULT_HOP_DECAY"),
        ("kgrag_neo4j.retrieval.scoring", "DEFAULT_ENTITY_SEED_WEIGHT"),
        ("kgrag_neo4j.retrieval.scoring", "RRF_K"),
        ("kgrag_neo4j.retrieval.ppr", "PPROptions"),
        ("kgrag_neo4j.ingestion.edges", "IngestGraphOptions"),
        ("kgrag_neo4j", "GraphOptions"),
        ("kgrag_neo4j", "IngestOptions"),
        ("kgrag_neo4j", "IngestGraphOptions"),
    ],
)
def test_old_import_paths_give_the_same_objects(old_module, name):
    import importlib

    assert getattr(importlib.import_module(old_module), name) is getattr(options, name)


@pytest.mark.parametrize(
    "bag, kwargs, named",
    [
        (GraphOptions, dict(max_hops=True), "max_hops"),
        (GraphOptions, dict(max_hops=-1), "max_hops"),
        (GraphOptions, dict(graph_weight=float("nan")), "graph_weight"),
        (GraphOptions, dict(hop_decay=()), "hop_decay"),
        (GraphOptions, dict(hop_decay=(1.0, -0.5)), "hop_decay"),
        (GraphOptions, dict(bidirectional=1), "bidirectional"),
        (GraphOptions, dict(relation_filter=["friend_of"]), "relation_filter"),
        (GraphOptions, dict(min_traversal_score=1.5), "min_traversal_score"),
        (GraphOptions, dict(seed_top_k=0), "seed_top_k"),
        (GraphOptions, dict(blend="mix"), "blend"),
        (GraphOptions, dict(entity_seed_weight=-1), "entity_seed_weight"),
        (PPROptions, dict(damping=1.0), "damping"),
        (PPROptions, dict(entity_vector_k=-1), "entity_vector_k"),
        (PPROptions, dict(max_iterations=True), "max_iterations"),
        (IngestOptions, dict(strategy="semantic"), "strategy"),
        (IngestOptions, dict(batch_size=0), "batch_size"),
        (IngestOptions, dict(child_tokens=2048), "child_tokens"),
        (IngestOptions, dict(embedding_failure="ignore"), "embedding_failure"),
        (IngestOptions, dict(graph={"sequence_edges": True}), "graph"),
        (IngestGraphOptions, dict(cross_document_batch_size=1), "cross_document_batch_size"),
        (IngestGraphOptions, dict(cross_document_threshold=2), "cross_document_threshold"),
    ],
)
def test_a_bad_value_is_one_line_naming_the_option(bag, kwargs, named):
    with pytest.raises(ConfigurationError, match=named) as caught:
        bag(**kwargs)
    assert "\n" not in str(caught.value)


def test_values_are_normalised_once_made():
    o = GraphOptions(hop_decay=[1, 0.5], relation_filter="references")
    assert o.hop_decay == (1.0, 0.5) and o.relation_filter == (RelationType.REFERENCES,)
    assert GraphOptions(blend="seed").entity_weight == 0.0
    assert GraphOptions().entity_weight == options.DEFAULT_ENTITY_SEED_WEIGHT


def test_text_edges_are_the_sources_read_from_a_document_alone():
    assert not IngestGraphOptions(similarity_edges=True).text_edges
    assert IngestGraphOptions(similarity_edges=True).enabled
    assert IngestGraphOptions(sequence_edges=True).text_edges


def test_graph_retrieve_takes_the_options_whole():
    """One signature for the native traversal: no ``**options`` catch-all on the store or the
    protocol, and the async twin takes the same."""
    for fn in (GraphTraverser.graph_retrieve, Neo4jStore.graph_retrieve, Neo4jStore.agraph_retrieve):
        params = inspect.signature(fn).parameters
        assert list(params)[:6] == ["self", "embedding", "query", "top_k", "options", "filters"], fn
        assert not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()), fn
