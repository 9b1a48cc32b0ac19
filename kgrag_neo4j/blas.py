"""numpy's BLAS on one thread for the products kgrag computes beside a busy database.

OpenBLAS splits a product of a few million multiply-adds over every core, and its threads
spin while they wait for the next one. Next to a Neo4j writing on the same machine that costs
far more than it gains: the WordLlama pooling of a 10,015-chunk ingest (tokens counted per
text, times their vectors) took 7.6 s of CPU on 2 cores, and 0.3 s on one thread.

``one_blas_thread()`` limits BLAS to one thread while any kgrag thread is inside it and puts
the process's setting back when the last one leaves. The setting is process-wide: BLAS work
of the application on other threads meanwhile runs on one thread too.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["one_blas_thread"]

_lock = threading.Lock()
_inside = 0
_restore: Any = None
_controller: Any = None


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    global _inside, _restore, _controller
    with _lock:
        if _inside == 0:
            if _controller is None:
                from threadpoolctl import ThreadpoolController

                _controller = ThreadpoolController()
            _restore = _controller.limit(limits=1, user_api="blas")
        _inside += 1
    try:
        yield
    finally:
        with _lock:
            _inside -= 1
            if _inside == 0 and _restore is not None:
                _restore.restore_original_limits()
                _restore = None
