"""numpy's BLAS on one thread for the products kgrag computes beside a busy database.

OpenBLAS splits a product of a few million multiply-adds over every core, and its threads
spin while they wait for the next one. Next to a Neo4j writing on the same machine that costs
far more CPU than it gains in time, for the WordLlama pooling of an ingest (tokens counted
per text, times their vectors) among others (docs/benchmarks.md).

``one_blas_thread()`` limits BLAS to one thread while any kgrag thread is inside it and puts
the process's setting back when the last one leaves. The setting is process-wide: BLAS work
of the application on other threads meanwhile runs on one thread too.

The thread that limits is not always the one that puts the setting back. threadpoolctl 3.8
lets only the thread that last set OpenBLAS's pool size set it again while that thread lives
and silently ignores the others, so each change here gives that control up again at once.
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
            _give_up_control()
        _inside += 1
    try:
        yield
    finally:
        with _lock:
            _inside -= 1
            if _inside == 0 and _restore is not None:
                _restore.restore_original_limits()
                _give_up_control()
                _restore = None


def _give_up_control() -> None:
    # clears the controlling thread only if it is this one: an application thread that holds
    # the control for its own limit keeps it, unless kgrag runs on that very thread inside the
    # application's limit (which then ends the control early). threadpoolctl before 3.8 has none
    from threadpoolctl import OpenBLASController

    clear = getattr(OpenBLASController, "clear_controlling_thread", None)
    if clear is not None:
        clear()
