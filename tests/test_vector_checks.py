"""The checks every vector passes before it is stored: the store's ``checked_vector`` and the
ingest's ``vectors.check_vectors`` (an embedder's answer). Both take a fast path for lists of
finite floats (a finite sum); these tables pin that it accepts and refuses what the exact
element-by-element check did, including a sum that overflows while every term is finite."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kgrag_neo4j.errors import DimensionMismatchError, InputError, ProviderResponseError
from kgrag_neo4j.ingestion.vectors import check_vectors
from kgrag_neo4j.store.schema import checked_vector

BIG = 1e308  # finite; four of them sum to infinity


@pytest.mark.parametrize(
    "vector, expected",
    [
        ([0.25, -0.5, 1.0, 0.0], [0.25, -0.5, 1.0, 0.0]),
        ([1, 2, 3, 4], [1.0, 2.0, 3.0, 4.0]),
        ((0.5, 0.5, 0.5, 0.5), [0.5] * 4),
        (np.array([0.1, 0.2, 0.3, 0.4], dtype=np.float32), [float(np.float32(x)) for x in (0.1, 0.2, 0.3, 0.4)]),
        ([BIG, BIG, BIG, BIG], [BIG] * 4),
        ([BIG, -BIG, BIG, -BIG], [BIG, -BIG, BIG, -BIG]),
    ],
)
def test_checked_vector_accepts_finite_numbers(vector, expected):
    got = checked_vector(vector, 4, "v")
    assert got == expected and all(type(x) is float for x in got)


@pytest.mark.parametrize(
    "vector, error, message",
    [
        ([0.1, 0.2, float("nan"), 0.4], InputError, "v contains NaN or infinity"),
        ([0.1, float("inf"), float("-inf"), 0.4], InputError, "v contains NaN or infinity"),
        ([BIG, BIG, BIG, float("inf")], InputError, "v contains NaN or infinity"),
        ([0.1, 0.2, 0.3], DimensionMismatchError, "v has 3 dimensions; the database's vector index has 4"),
        ([0.1, "x", 0.3, 0.4], InputError, "v is not a list of numbers"),
        (None, InputError, "v is not a list of numbers"),
        ([[0.1], [0.2], [0.3], [0.4]], InputError, "v is not a list of numbers"),
    ],
)
def test_checked_vector_refuses_with_one_line(vector, error, message):
    with pytest.raises(error, match="^" + message.replace("(", r"\(") + "$"):
        checked_vector(vector, 4, "v")


def test_checked_vector_keeps_the_exact_check_for_an_overflowing_sum():
    assert math.isinf(sum([BIG] * 4))  # what sends it past the fast path
    assert checked_vector([BIG] * 4, 4, "v") == [BIG] * 4


@pytest.mark.parametrize(
    "vectors",
    [
        [[0.5, 0.25], [1.0, 0.0]],
        [[1, 2], [3, 4]],
        [[BIG, BIG], [BIG, BIG]],
        np.array([[0.5, 0.25], [1.0, 0.0]]),
        [np.array([0.5, 0.25]), np.array([1.0, 0.0])],
    ],
)
def test_an_embedders_finite_vectors_pass(vectors):
    got = check_vectors(vectors, 2)
    assert len(got) == 2 and all(len(v) == 2 for v in got)
    assert [[float(x) for x in v] for v in got] == [[float(x) for x in v] for v in vectors]


@pytest.mark.parametrize(
    "vectors, message",
    [
        ([[0.5, 0.25], [float("nan"), 0.0]], "NaN or infinity for text 1"),
        ([[0.5, float("inf")], [0.5, 0.0]], "NaN or infinity for text 0"),
        ([[BIG, BIG], [BIG, float("inf")]], "NaN or infinity for text 1"),
        ([[0.5, 0.25], [0.5]], "1 numbers for text 1; it declares 2"),
        ([[0.5, 0.25], ["a", 0.5]], "non-numeric vector for text 1"),
        ([[0.5, 0.25], None], "non-numeric vector for text 1"),
    ],
)
def test_an_embedders_garbage_is_a_provider_error_naming_the_text(vectors, message):
    with pytest.raises(ProviderResponseError, match=message):
        check_vectors(vectors, 2)
