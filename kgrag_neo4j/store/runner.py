"""Runs registered Cypher statements on a driver: the only place that touches sessions.

``mode`` of each file decides how it runs: ``read`` with read routing (a cluster sends it to a
reader) in one round trip, ``write`` in a managed transaction that the driver retries on
transient errors (so every write file is idempotent), ``schema`` one statement at a time in
auto-commit. Driver errors are translated into the library's tree in ``map_neo4j_errors`` and
nowhere else.
"""

from __future__ import annotations

import contextlib
import logging
import random
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar, overload

import neo4j
from neo4j import GraphDatabase
from neo4j import exceptions as neo4j_exc

from ..cypher_registry import CypherQuery, CypherRegistry, load_registry
from ..errors import (
    AuthenticationFailed,
    ConnectionFailed,
    DatabaseNotFound,
    InputError,
    StoreError,
    TransactionMemoryError,
    TransientStoreError,
)
from ..settings import Neo4jSettings
from ..steps import Call, Pause, Step, Steps, run_steps

__all__ = [
    "ConcurrentDelete",
    "CypherRunner",
    "RaceRetry",
    "check_vanished",
    "connect_driver",
    "map_neo4j_errors",
    "worth_a_managed_retry",
]

log = logging.getLogger("kgrag_neo4j.store")

#: How long a managed transaction keeps retrying transient errors before giving up.
DEFAULT_RETRY_SECONDS = 15.0
#: How long opening a connection may take before the server counts as unreachable.
DEFAULT_CONNECT_SECONDS = 5.0


DriverT = TypeVar("DriverT")


@overload
def connect_driver(settings: Neo4jSettings, *, max_retry_seconds: float = ..., connect_seconds: float = ...) -> neo4j.Driver: ...
@overload
def connect_driver(
    settings: Neo4jSettings,
    *,
    max_retry_seconds: float = ...,
    connect_seconds: float = ...,
    factory: Callable[..., DriverT],
) -> DriverT: ...
def connect_driver(
    settings: Neo4jSettings,
    *,
    max_retry_seconds: float = DEFAULT_RETRY_SECONDS,
    connect_seconds: float = DEFAULT_CONNECT_SECONDS,
    factory: Callable[..., Any] = GraphDatabase.driver,
) -> Any:
    """A driver for ``settings`` with bounded waits (so an outage fails, never hangs);
    ``factory=AsyncGraphDatabase.driver`` makes the async twin with the same options."""
    auth = (settings.user, settings.password) if settings.password is not None else None
    with map_neo4j_errors(settings.redacted_uri):
        return factory(
            settings.uri,
            auth=auth,
            max_transaction_retry_time=max_retry_seconds,
            connection_timeout=connect_seconds,
            connection_acquisition_timeout=connect_seconds * 2,
            user_agent="kgrag-neo4j",
            # a fresh database lacks labels the read queries name; that warning is noise
            notifications_disabled_categories=["UNRECOGNIZED"],
        )


#: Neo4j reads at read-committed isolation: a statement that meets a node another transaction
#: deleted and committed meanwhile (a vector-index hit, a chunk being replaced) fails with this
#: code, which the driver does not retry. Like a deadlock, running the transaction again is the
#: cure, so the runner retries it with growing, jittered pauses for up to ``RACE_RETRY_SECONDS``
#: (found by tests/test_concurrency.py; under churn one transaction can lose several races in a row).
CONCURRENT_DELETE_CODE = "Neo.ClientError.Statement.EntityNotFound"
RACE_RETRY_SECONDS = 10.0
_RACE_FIRST_PAUSE = 0.05
_RACE_MAX_PAUSE = 1.0


class ConcurrentDelete(TransientStoreError):
    """Raised by a transaction function that finds a node it merged deleted by a transaction
    that committed meanwhile. Neo4j does not always fail such a write with
    ``CONCURRENT_DELETE_CODE``: a property write can pass and the node then reads as all-null
    (seen under the stress run: a document replaced while another writer deleted it). The
    statement reports it and the runner retries like any lost race; if the retries run out it
    surfaces as this ``TransientStoreError``."""


def check_vanished(what: str, ids: Sequence[str]) -> None:
    """Raise ``ConcurrentDelete`` (the runner then runs the transaction again) for the ids a
    statement reports as deleted under it (its ``vanished`` column)."""
    if ids:
        raise ConcurrentDelete(f"{what} {ids[0]!r} was deleted by a concurrent transaction while it was written")


def underlying_error(exc: BaseException) -> BaseException:
    """The server error a driver ``ResultFailedError`` stands for.

    When a statement fails inside a managed transaction, the rollback consumes the failed
    result again and the driver raises ``ResultFailedError`` (not retryable) in place of the
    server's error, so a deadlock or a lost race would otherwise surface as a driver error."""
    seen: BaseException = exc
    while isinstance(seen, neo4j_exc.ResultFailedError) and seen.__cause__ is not None:
        seen = seen.__cause__
    return seen


def is_constraint_violation(exc: BaseException) -> bool:
    """Whether a statement failed on a uniqueness constraint (an id that is taken)."""
    return isinstance(underlying_error(exc), neo4j_exc.ConstraintError)


def lost_race(exc: BaseException) -> bool:
    """True when running the transaction again is the cure: a concurrent delete met
    (``CONCURRENT_DELETE_CODE``) or a transient error the driver could not retry itself."""
    root = underlying_error(exc)
    if isinstance(root, ConcurrentDelete):
        return True
    if not isinstance(root, neo4j_exc.Neo4jError):
        return False
    return root.code == CONCURRENT_DELETE_CODE or bool(root.is_retryable())


def race_pause(attempt: int, *, jitter: float) -> float:
    """Seconds to wait before retry ``attempt`` (0-based): doubling from 50 ms to a 1 s cap,
    times ``jitter`` (0.5 to 1.5) so colliding writers do not retry in lockstep."""
    return min(_RACE_MAX_PAUSE, _RACE_FIRST_PAUSE * 2**attempt) * jitter


def worth_a_managed_retry(exc: BaseException) -> bool:
    """Whether a read that failed in one auto-commit attempt should run again as the driver's
    managed transaction, which retries it: a connection error or a transient server error
    (what ``Driver.execute_query`` retries), not a lost race (``RaceRetry`` runs those again)."""
    root = underlying_error(exc)
    return isinstance(root, (neo4j_exc.Neo4jError, neo4j_exc.DriverError)) and bool(root.is_retryable())


#: one try of a read statement: (statement text, parameters, managed) -> the step that runs it
Attempt = Callable[[str, dict[str, Any], bool], Step["Rows"]]


class RaceRetry:
    """The policy of ``lost_race`` retries, for the sync runner and its async twin alike:
    ``pause(exc)`` is the seconds to wait before running the transaction again, or raises
    (the server's own error) when the failure is not a lost race or the time is spent."""

    def __init__(self) -> None:
        self.deadline = time.monotonic() + RACE_RETRY_SECONDS
        self.attempt = 0

    def pause(self, exc: BaseException) -> float:
        root = underlying_error(exc)
        if not lost_race(exc) or time.monotonic() >= self.deadline:
            if root is not exc:
                raise root from None
            raise exc
        pause = race_pause(self.attempt, jitter=random.uniform(0.5, 1.5))
        log.debug("transaction lost a race (retry %d in %.2fs): %s", self.attempt + 1, pause, root)
        self.attempt += 1
        return pause


#: the server's answers to a transaction that outgrew its transaction memory: all
#: transactions' (``dbms.memory.transaction.total.max``) or its own (``db.memory.transaction.max``)
MEMORY_CODES = ("Neo.TransientError.General.MemoryPoolOutOfMemoryError", "Neo.ClientError.General.TransactionOutOfMemoryError")

_CODE_MAP: tuple[tuple[str, type[StoreError]], ...] = (
    ("Neo.ClientError.Database.DatabaseNotFound", DatabaseNotFound),
    ("Neo.ClientError.Security.Unauthorized", AuthenticationFailed),
    ("Neo.ClientError.Security.AuthenticationRateLimit", AuthenticationFailed),
)


@contextlib.contextmanager
def map_neo4j_errors(where: str = "") -> Iterator[None]:
    """Translate driver exceptions into ``StoreError`` subclasses with one readable line."""
    suffix = f" ({where})" if where else ""
    try:
        yield
    except neo4j_exc.AuthError as exc:
        raise AuthenticationFailed(f"Neo4j rejected the credentials{suffix}: check NEO4J_USERNAME / NEO4J_PASSWORD") from exc
    except (neo4j_exc.ServiceUnavailable, neo4j_exc.SessionExpired, OSError) as exc:
        raise ConnectionFailed(
            f"cannot reach Neo4j{suffix}: {_first_line(exc)}. Is the server running? (`kgrag server start` runs a local one)"
        ) from exc
    except neo4j_exc.ConfigurationError as exc:
        raise StoreError(f"invalid driver configuration{suffix}: {_first_line(exc)}") from exc
    except neo4j_exc.Neo4jError as exc:
        code = exc.code or ""
        for prefix, cls in _CODE_MAP:
            if code.startswith(prefix):
                raise cls(f"{_first_line(exc.message or str(exc))}{suffix}") from exc
        if code in MEMORY_CODES:
            raise TransactionMemoryError(
                f"a transaction outgrew the server's transaction memory{suffix}: {code}: {_first_line(exc.message)}"
            ) from exc
        if code.startswith("Neo.TransientError") or exc.is_retryable():
            raise TransientStoreError(
                f"Neo4j transient error outlived the retries{suffix}: {code}: {_first_line(exc.message)}"
            ) from exc
        if code.startswith("Neo.ClientError.Statement.TypeError") or code.startswith(
            "Neo.ClientError.Procedure.ProcedureCallFailed"
        ):
            raise InputError(f"Neo4j refused the input{suffix}: {_first_line(exc.message)}") from exc
        raise StoreError(f"Neo4j error{suffix}: {code}: {_first_line(exc.message or str(exc))}") from exc
    except neo4j_exc.DriverError as exc:
        raise StoreError(f"Neo4j driver error{suffix}: {_first_line(exc)}") from exc
    # what the driver cannot even send: caught here so bad input is one error, not a traceback
    except OverflowError:
        raise InputError("a number is outside the 64-bit integer range Neo4j stores") from None
    except UnicodeEncodeError as exc:
        raise InputError(
            f"text is not valid Unicode (character {exc.start + 1} is a lone surrogate, as a file "
            "name or argument that is not UTF-8 gives)"
        ) from None
    except RecursionError:
        raise InputError("a parameter is nested too deeply to send") from None


def _first_line(value: Any) -> str:
    text = str(value or "").strip()
    return text.splitlines()[0] if text else type(value).__name__


Rows = list[dict[str, Any]]


class _LoggedList(list[Any]):
    """A list parameter with a short ``repr``. The driver formats every RUN's parameters for
    its debug log before it looks at the log level (``bolt5.run``): for a write with its vectors
    that is tens of milliseconds of client CPU per transaction.
    The driver packs it as the list it is. A few scalars (``hop_decay``) stay readable; a
    few maps do not, as one of them may hold a document's chunks and their vectors."""

    __slots__ = ()

    def __repr__(self) -> str:
        if len(self) <= 8 and not any(isinstance(v, (list, dict)) for v in self):
            return list.__repr__(self)
        return f"[<{len(self)} items>]"


def log_safe(params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` with its list values wrapped in ``_LoggedList`` (a shallow copy)."""
    return {k: _LoggedList(v) if type(v) is list else v for k, v in params.items()}


class CypherRunner:
    """Executes registry statements by name against one database of one driver."""

    def __init__(
        self,
        driver: neo4j.Driver,
        *,
        database: str | None = None,
        registry: CypherRegistry | None = None,
        where: str = "",
        tracer: Callable[[str, Mapping[str, Any], float], None] | None = None,
    ):
        self.driver = driver
        self.database = database
        self.registry = registry or load_registry()
        self.where = where
        self.tracer = tracer
        #: statements sent since creation; lets tests and benchmarks count round trips
        self.round_trips = 0
        self._count_lock = threading.Lock()  # an ingest writes from two threads

    def query(self, name: str) -> CypherQuery:
        return self.registry[name]

    def _session(self, access_mode: str) -> neo4j.Session:
        return self.driver.session(database=self.database, default_access_mode=access_mode)

    def _execute(self, access_mode: str, work: Callable[[neo4j.ManagedTransaction], Any]) -> Any:
        """A managed transaction (the driver retries transient errors), run again while it
        keeps losing races with concurrent deletes (see ``lost_race``), for a bounded time."""
        retry = RaceRetry()
        while True:
            try:
                with self._session(access_mode) as session:
                    if access_mode == neo4j.READ_ACCESS:
                        return session.execute_read(work)
                    return session.execute_write(work)
            except (neo4j_exc.Neo4jError, neo4j_exc.ResultFailedError, ConcurrentDelete) as exc:
                time.sleep(retry.pause(exc))

    def _trace(self, name: str, params: Mapping[str, Any], started: float) -> None:
        with self._count_lock:
            self.round_trips += 1
        if self.tracer is not None:
            self.tracer(name, params, time.perf_counter() - started)

    def read_query(self, name: str, params: Mapping[str, Any]) -> CypherQuery:
        """The registered ``mode: read`` statement, its parameters checked."""
        q = self.registry[name]
        if q.mode != "read":
            raise StoreError(f"{q.path}:{q.line}: {name} is mode {q.mode}, not read")
        q.check_params(params)
        return q

    def read(self, name: str, /, **params: Any) -> Rows:
        """Run a ``mode: read`` statement with read routing; return rows as dicts.

        One network round trip: the statement runs in an auto-commit transaction, whose RUN
        and PULL go out together and whose reply ends the transaction. A managed transaction
        (``Driver.execute_query``) costs a second round trip for its COMMIT, a tenth of a graph
        retrieval's time (docs/benchmarks.md). What the driver's managed
        transaction gave is kept: if the one-round-trip attempt fails with an error worth
        retrying (a pooled connection found dead, a transient server error), the read runs
        again as the driver's managed, retried transaction, within its retry time
        (``max_transaction_retry_time``); a read that loses a race with a concurrent delete
        is run again as before (``RaceRetry``). No bookmark manager: as with a session per
        call, a read does not wait for the bookmarks of earlier reads.
        """
        started = time.perf_counter()
        rows = run_steps(self.read_steps(name, params, lambda text, sent, managed: Call.of(self._attempt, text, sent, managed)))
        self._trace(name, params, started)
        return rows

    def read_steps(self, name: str, params: Mapping[str, Any], attempt: Attempt) -> Steps[Rows]:
        """The body of ``read``, shared by the async runner (``store/aio.py``), which passes its
        own ``attempt``: the retries and the error mapping are written once."""
        q = self.read_query(name, params)
        sent = log_safe(params)
        retry = RaceRetry()
        managed = False
        with map_neo4j_errors(self.where):
            while True:
                try:
                    return (yield from attempt(*q.send(sent), managed))
                except (neo4j_exc.Neo4jError, neo4j_exc.DriverError, ConcurrentDelete) as exc:
                    if not managed and worth_a_managed_retry(exc):
                        managed = True
                        continue
                    yield from Pause(retry.pause(exc))

    def _attempt(self, text: str, sent: dict[str, Any], managed: bool) -> Rows:
        if managed:
            rows: Rows = self.driver.execute_query(
                text,
                sent,
                routing_=neo4j.RoutingControl.READ,
                database_=self.database,
                bookmark_manager_=None,
                result_transformer_=as_rows,
            )
            return rows
        with self._session(neo4j.READ_ACCESS) as session:
            return as_rows(session.run(text, sent))

    def write(self, name: str, /, **params: Any) -> Rows:
        """Run one ``mode: write`` statement in a retried managed transaction."""
        return self.write_tx([(name, params)])[0]

    def write_batches(self, name: str, /, *, batch_size: int, **params: Any) -> Iterator[Rows]:
        """Run a write statement that takes ``$batch_size`` again and again, each in its own
        transaction, yielding its rows; the caller stops when the work is done. A batch that
        outgrew the server's transaction memory goes again a quarter the size (nodes are not
        all small: a document keeps its whole text), down to one."""
        size = batch_size
        while True:
            try:
                rows = self.write(name, batch_size=size, **params)
            except TransactionMemoryError:
                if size == 1:
                    raise
                size = max(1, size // 4)
                continue
            yield rows

    def write_tx(self, steps: Sequence[tuple[str, Mapping[str, Any]]]) -> list[Rows]:
        """Run several write statements in ONE transaction: all of them land, or none."""
        prepared: list[tuple[CypherQuery, dict[str, Any]]] = []
        for name, params in steps:
            q = self.registry[name]
            if q.mode != "write":
                raise StoreError(f"{q.path}:{q.line}: {name} is mode {q.mode}, not write")
            q.check_params(params)
            prepared.append((q, log_safe(params)))
        started = time.perf_counter()

        def work(tx: neo4j.ManagedTransaction) -> list[Rows]:
            return [as_rows(tx.run(*q.send(p))) for q, p in prepared]

        with map_neo4j_errors(self.where):
            out = self._execute(neo4j.WRITE_ACCESS, work)
        for name, params in steps:
            self._trace(name, params, started)
        return out

    def write_fn(self, fn: Callable[[TxRunner], Any]) -> Any:
        """Run ``fn`` inside one retried write transaction. ``fn`` may run more than once."""
        started = time.perf_counter()
        with map_neo4j_errors(self.where):
            out = self._execute(neo4j.WRITE_ACCESS, lambda tx: fn(TxRunner(self.registry, tx)))
        self._trace("<tx>", {}, started)
        return out

    def schema(self, name: str, /, **params: Any) -> None:
        """Run each statement of a ``mode: schema`` file in auto-commit."""
        q = self.registry[name]
        if q.mode != "schema":
            raise StoreError(f"{q.path}:{q.line}: {name} is mode {q.mode}, not schema")
        q.check_params(params)
        with map_neo4j_errors(self.where), self._session(neo4j.WRITE_ACCESS) as session:
            for statement in q.statements:
                started = time.perf_counter()
                used = {k: v for k, v in params.items() if "$" + k in statement}
                session.run(statement, used).consume()
                self._trace(name, used, started)

    def run_any(self, name: str, /, **params: Any) -> Rows:
        """Run a statement by its declared mode (``kgrag cypher run``)."""
        q = self.registry[name]
        if q.mode == "read":
            return self.read(name, **params)
        if q.mode == "write":
            return self.write(name, **params)
        self.schema(name, **params)
        return []

    def profile(self, name: str, /, **params: Any) -> dict[str, Any]:
        """PROFILE a read statement; return total db hits and rows (for benchmarks and docs)."""
        q = self.registry[name]
        q.check_params(params)
        with map_neo4j_errors(self.where), self._session(neo4j.READ_ACCESS) as session:
            text, sent = q.send(log_safe(params))
            result = session.run("PROFILE " + text, sent)
            rows = as_rows(result)
            summary = result.consume()
        plan = summary.profile or {}
        return {"db_hits": _sum_hits(plan), "rows": len(rows), "plan": plan}

    def explain(self, name: str) -> None:
        q = self.registry[name]
        with map_neo4j_errors(self.where), self._session(neo4j.READ_ACCESS) as session:
            for statement in q.statements:
                session.run("EXPLAIN " + statement, {p: None for p in q.param_names}).consume()


class TxRunner:
    """Registry access inside one open transaction (see ``CypherRunner.write_fn``)."""

    def __init__(self, registry: CypherRegistry, tx: neo4j.ManagedTransaction):
        self.registry = registry
        self.tx = tx

    def run(self, name: str, /, **params: Any) -> Rows:
        q = self.registry[name]
        q.check_params(params)
        return as_rows(self.tx.run(*q.send(log_safe(params))))


def as_rows(result: Iterable[neo4j.Record]) -> Rows:
    """Records as plain dicts. Registry statements return values (maps, lists, scalars), never
    nodes or relationships (tests/test_registry.py checks every header), so the shallow copy
    is enough, and cheaper than ``Record.data()``'s deep walk."""
    return [dict(zip(r.keys(), r.values())) for r in result]


def _sum_hits(plan: Mapping[str, Any]) -> int:
    total = int(plan.get("dbHits", 0) or 0)
    for child in plan.get("children", ()) or ():
        total += _sum_hits(child)
    return total
