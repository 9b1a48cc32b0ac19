"""List parameters reach the server whole, and the driver's debug log does not print them.

The driver formats every RUN's parameters with ``repr`` for its debug log before it looks at
the log level; the runner hands it lists whose ``repr`` is short (``store.runner.log_safe``).
"""

from __future__ import annotations

import asyncio
import logging
import re

import pytest

from kgrag_neo4j.store.runner import log_safe
from kgrag_neo4j.types import Chunk, Document


@pytest.mark.parametrize(
    "value",
    [[], [1, 2, 3], [0.125] * 256, [{"id": "a", "embedding": [0.5] * 256}] * 300, [["nested", 1]] * 20],
)
def test_log_safe_lists_reach_the_server_unchanged(store, value):
    wrapped = log_safe({"v": value})["v"]
    assert wrapped == value and wrapped is not value
    rows = store.runner.driver.execute_query("RETURN $v AS v", {"v": wrapped}, result_transformer_=lambda r: r.single()["v"])
    assert rows == value


def test_log_safe_keeps_short_lists_readable_and_leaves_other_values():
    params = log_safe({"hop_decay": [1.0, 0.7, 0.5], "embedding": [0.1] * 256, "name": "x", "n": 3, "m": {"a": [1] * 50}})
    assert repr(params["hop_decay"]) == "[1.0, 0.7, 0.5]"
    assert repr(params["embedding"]) == "[<256 items>]"
    assert params["name"] == "x" and params["n"] == 3 and params["m"] == {"a": [1] * 50}


def test_a_short_list_of_maps_is_not_printed_whole():
    # one document with its chunks and their vectors is a list of one map
    params = log_safe({"documents": [{"id": "d", "chunks": [{"embedding": [0.5] * 256}] * 1000}]})
    assert repr(params["documents"]) == "[<1 items>]"


FLOATS_IN_A_ROW = re.compile(r"(-?\d+\.\d+(e-?\d+)?, ){16}")


def _run_lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "C: RUN" in r.getMessage()]


def test_a_write_and_a_search_log_no_vectors(store, hashing_embedder, caplog):
    texts = [f"paragraph {i} about graphs and vectors" for i in range(200)]
    vectors = hashing_embedder.embed(texts)
    doc = Document(id="log-" + store.namespace, source="log.txt", content="\n".join(texts), content_hash="h1")
    chunks = [
        Chunk(id=f"log-{store.namespace}-{i}", document_id=doc.id, content=t, chunk_index=i, embedding=v)
        for i, (t, v) in enumerate(zip(texts, vectors))
    ]
    caplog.set_level(logging.DEBUG, logger="neo4j")
    store.store_document(doc, chunks)
    assert [r.id for r in store.search_chunks(vectors[7], 1)] == [chunks[7].id]
    asyncio.run(store.asearch_chunks(vectors[7], 1))
    lines = _run_lines(caplog)
    assert lines, "the driver logged no RUN line at DEBUG"
    # a vector printed in full is 256 numbers in a row (200 of them for the write)
    assert not [line for line in lines if FLOATS_IN_A_ROW.search(line)]
    assert any("<256 items>" in line for line in lines)
