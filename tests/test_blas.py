"""``blas.one_blas_thread``: BLAS on one thread inside, the process's setting back after, also
when kgrag threads overlap inside it."""

from __future__ import annotations

import os
import subprocess
import sys

from threadpoolctl import threadpool_info

from kgrag_neo4j.blas import one_blas_thread


def _blas_threads() -> list[int]:
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


_OVERLAP = """
import threading
import numpy as np
from threadpoolctl import threadpool_info
from kgrag_neo4j.blas import one_blas_thread

def _blas_threads():
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]

np.ones((2, 2)) @ np.ones((2, 2))  # numpy's BLAS is loaded
before = _blas_threads()
assert before, "numpy has no BLAS threadpool to limit"
assert 1 not in before, ("BLAS is on one thread already: nothing to see", before)
first_inside, second_in, release = threading.Event(), threading.Event(), threading.Event()
second_out = threading.Event()
seen = {}

def first():
    with one_blas_thread():
        seen["first"] = _blas_threads()
        first_inside.set()
        second_in.wait(10)
    seen["first left"] = _blas_threads()  # the second is still inside: still one thread
    release.set()
    # alive while the second puts the setting back: threadpoolctl 3.8 lets only the thread
    # that last set OpenBLAS's limit set it again while that thread lives
    second_out.wait(10)

def second():
    first_inside.wait(10)
    with one_blas_thread():
        second_in.set()
        release.wait(10)
        seen["second"] = _blas_threads()
    seen["second left"] = _blas_threads()
    second_out.set()

threads = [threading.Thread(target=first), threading.Thread(target=second)]
for t in threads:
    t.start()
for t in threads:
    t.join(20)
assert seen["first"] == seen["first left"] == seen["second"] == [1] * len(before), (seen, before)
assert seen["second left"] == before, (seen, before)
assert _blas_threads() == before, (_blas_threads(), before)
print("ok")
"""


def test_one_thread_inside_and_the_setting_back_after_overlapping_users():
    # in a process of its own: the BLAS setting is process-wide, and threads other tests leave
    # behind (a cancelled ingest finishing its batch) would take part
    # two BLAS threads to begin with, whatever the machine's cores
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "2"}
    done = subprocess.run([sys.executable, "-c", _OVERLAP], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_the_setting_comes_back_after_an_error():
    before = _blas_threads()
    try:
        with one_blas_thread():
            raise ValueError("boom")
    except ValueError:
        pass
    assert _blas_threads() == before
