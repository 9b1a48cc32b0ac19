"""SimilarityLinker: similar_to edges exact in memory for the chunks at hand, the index (a
callable here: the store's is tested in test_bulk_ingest.py) for the rest. Pure."""

from __future__ import annotations

import numpy as np
import pytest

from kgrag_neo4j.errors import ConfigurationError
from kgrag_neo4j.ingestion.similarity import SimilarityLinker
from kgrag_neo4j.types import RelationType

# unit vectors in the plane at known angles: cos(a - b) is the similarity
ANGLES = {"a": 0, "b": 10, "c": 20, "d": 90, "e": 100}


def vec(name: str) -> list[float]:
    r = np.radians(ANGLES[name])
    return [float(np.cos(r)), float(np.sin(r))]


def cos(x: str, y: str) -> float:
    return float(np.cos(np.radians(ANGLES[x] - ANGLES[y])))


def edges_of(found):
    return {(e.source_id, e.target_id): round(e.weight, 4) for e in found}


@pytest.mark.parametrize(
    "top_k, threshold, expected",
    [
        # every chunk links to its nearest others above the threshold, itself never
        (1, 0.5, {("a", "b"), ("b", "a"), ("c", "b"), ("d", "e"), ("e", "d")}),
        (2, 0.5, {("a", "b"), ("a", "c"), ("b", "a"), ("b", "c"), ("c", "b"), ("c", "a"), ("d", "e"), ("e", "d")}),
        (5, 0.95, {("a", "b"), ("b", "a"), ("b", "c"), ("c", "b"), ("d", "e"), ("e", "d")}),
        (5, 0.999, set()),
    ],
)
def test_one_batch_is_linked_exactly(top_k, threshold, expected):
    linker = SimilarityLinker(top_k=top_k, threshold=threshold)
    names = list(ANGLES)
    found = edges_of(linker.link(names, [vec(n) for n in names]))
    assert set(found) == expected
    assert all(abs(w - round(cos(s, t), 4)) < 1e-4 for (s, t), w in found.items())


def test_edges_are_similar_to_with_the_cosine_as_weight():
    e = SimilarityLinker(top_k=1, threshold=0.0).link(["a", "b"], [vec("a"), vec("b")])[0]
    assert e.relation == RelationType.SIMILAR_TO and e.origin == "similarity"
    assert e.description == f"cosine similarity {cos('a', 'b'):.3f}"


def test_later_batches_see_earlier_ones_and_only_the_new_chunks_get_edges():
    linker = SimilarityLinker(top_k=1, threshold=0.5)
    assert edges_of(linker.link(["a", "d"], [vec("a"), vec("d")])) == {}
    assert set(edges_of(linker.link(["b", "e"], [vec("b"), vec("e")]))) == {("b", "a"), ("e", "d")}


def test_the_index_answers_for_what_is_outside_the_window():
    asked = []

    def nearest(ids, vectors):
        asked.append(list(ids))
        return [[("stored-1", 0.99)] for _ in ids]

    linker = SimilarityLinker(top_k=2, threshold=0.5, nearest=nearest, window=3)
    # an empty namespace: no index call while everything fits the window
    linker.link(["a", "b"], [vec("a"), vec("b")])
    assert asked == []
    # the window overflows: the oldest leave it, and from then on the index is asked
    linker.link(["c", "d"], [vec("c"), vec("d")])
    assert linker.stored_outside and asked == []
    found = edges_of(linker.link(["e"], [vec("e")]))
    assert asked == [["e"]]
    assert found == {("e", "stored-1"): 0.99, ("e", "d"): round(cos("e", "d"), 4)}


def test_a_namespace_with_chunks_asks_the_index_from_the_start_and_merges_answers():
    def nearest(ids, vectors):
        return [[("b", 0.5), ("old", 0.97)] for _ in ids]  # the index's (approximate) cosine for b

    linker = SimilarityLinker(top_k=2, threshold=0.0, nearest=nearest, stored_outside=True)
    found = edges_of(linker.link(["a", "b"], [vec("a"), vec("b")]))
    # the exact in-memory cosine of a-b wins over the index's lower one; old comes from the index
    assert found[("a", "b")] == round(cos("a", "b"), 4)
    assert found[("a", "old")] == 0.97


def test_preloaded_chunks_are_found_but_get_no_edges_and_add_false_keeps_the_window():
    linker = SimilarityLinker(top_k=1, threshold=0.5)
    linker.preload(["a", "d"], [vec("a"), vec("d")])
    assert set(edges_of(linker.link(["b"], [vec("b")], add=False))) == {("b", "a")}
    assert set(edges_of(linker.link(["c"], [vec("c")], add=False))) == {("c", "a")}  # b was not added


@pytest.mark.parametrize("options", [dict(top_k=0), dict(top_k=True), dict(threshold=1.5)])
def test_bad_options_are_refused(options):
    with pytest.raises(ConfigurationError):
        SimilarityLinker(**options)


def test_a_zero_vector_links_to_nothing_and_no_weight_is_zero_or_less():
    linker = SimilarityLinker(top_k=4, threshold=-1.0)
    found = edges_of(linker.link(["z", "a", "d"], [[0.0, 0.0], vec("a"), vec("d")]))
    assert found == {("a", "d"): round(cos("a", "d"), 4), ("d", "a"): round(cos("a", "d"), 4)}
