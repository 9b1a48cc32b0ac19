"""``blas.one_blas_thread``: BLAS on one thread inside, the process's setting back after, also
when kgrag threads overlap inside it."""

from __future__ import annotations

import threading

import numpy as np
from threadpoolctl import threadpool_info

from kgrag_neo4j.blas import one_blas_thread


def _blas_threads() -> list[int]:
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


def test_one_thread_inside_and_the_setting_back_after_overlapping_users():
    np.ones((2, 2)) @ np.ones((2, 2))  # numpy's BLAS is loaded
    before = _blas_threads()
    assert before, "numpy has no BLAS threadpool to limit"
    first_inside, second_in, release = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, list[int]] = {}

    def first() -> None:
        with one_blas_thread():
            seen["first"] = _blas_threads()
            first_inside.set()
            second_in.wait(10)
        seen["first left"] = _blas_threads()  # the second is still inside: still one thread
        release.set()

    def second() -> None:
        first_inside.wait(10)
        with one_blas_thread():
            second_in.set()
            release.wait(10)
            seen["second"] = _blas_threads()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert seen["first"] == seen["first left"] == seen["second"] == [1] * len(before)
    assert _blas_threads() == before


def test_the_setting_comes_back_after_an_error():
    before = _blas_threads()
    try:
        with one_blas_thread():
            raise ValueError("boom")
    except ValueError:
        pass
    assert _blas_threads() == before
