"""Neo4jStore: the only class that talks to the database.

Each capability lives in its own mixin module (documents, schema, graph, entities, ...);
this class only composes them and owns the driver's lifetime. ``Neo4jStore(driver)`` borrows
a driver; ``Neo4jStore.connect(settings)`` creates one and closes it on ``close()``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import neo4j

from ..cypher_registry import CypherRegistry
from ..settings import DEFAULT_NAMESPACE, Neo4jSettings, validate_namespace
from ..validation import check_int
from .aio import AsyncDrivers
from .chunks import ChunksMixin
from .communities import CommunitiesMixin
from .document_reads import DocumentReadsMixin
from .documents import DocumentsMixin
from .entities import EntitiesMixin
from .entity_graph import EntityGraphMixin
from .graph import GraphMixin
from .namespaces import NamespacesMixin
from .runner import CypherRunner, connect_driver, map_neo4j_errors
from .schema import SchemaMixin
from .triples import TriplesMixin
from .vectors import VectorsMixin

__all__ = ["Neo4jStore"]


class Neo4jStore(
    SchemaMixin,
    DocumentsMixin,
    DocumentReadsMixin,
    ChunksMixin,
    GraphMixin,
    TriplesMixin,
    EntitiesMixin,
    EntityGraphMixin,
    CommunitiesMixin,
    NamespacesMixin,
    VectorsMixin,
):
    """Documents, chunks and their graph in one Neo4j database, scoped to one namespace."""

    #: every read a retriever body calls has a declared async twin (``steps.twin_methods``):
    #: one without it is an error in an event loop, never a silent worker thread
    async_twins: ClassVar[bool] = True

    def __init__(
        self,
        driver: neo4j.Driver,
        *,
        namespace: str = DEFAULT_NAMESPACE,
        database: str | None = None,
        registry: CypherRegistry | None = None,
        vector_overfetch: int = 4,
        tracer: Callable[[str, Mapping[str, Any], float], None] | None = None,
        settings: Neo4jSettings | None = None,
        async_driver: neo4j.AsyncDriver | None = None,
        _owns_driver: bool = False,
        _where: str = "",
        _aio: AsyncDrivers | None = None,
        _existing_name: bool = False,
    ):
        check_int(vector_overfetch, "vector_overfetch", minimum=1)
        self.namespace = validate_namespace(namespace, look_alikes=not _existing_name)
        self.database = database
        self.vector_overfetch = vector_overfetch
        self.runner = CypherRunner(driver, database=database, registry=registry, where=_where, tracer=tracer)
        self._owns_driver = _owns_driver
        # async reads (``aretrieve``): an AsyncDriver per event loop, from ``settings`` (kept
        # only for that) or the caller's ``async_driver``; shared with ``with_namespace`` copies
        self.aio = _aio or AsyncDrivers(settings, async_driver, self.runner)
        self._dimensions: int | None = None
        self._model: str | None = None
        self._closed = False

    @classmethod
    def connect(
        cls, settings: Neo4jSettings, *, namespace: str = DEFAULT_NAMESPACE, verify: bool = True, **options: Any
    ) -> Neo4jStore:
        """Open a driver for ``settings`` (owned: ``close()`` closes it) and check it answers."""
        validate_namespace(namespace)  # before the driver exists: a refused name leaks nothing
        driver = connect_driver(settings)
        try:
            store = cls(
                driver,
                namespace=namespace,
                database=settings.database,
                settings=settings,
                _owns_driver=True,
                _where=settings.redacted_uri,
                **options,
            )
        except BaseException:
            driver.close()
            raise
        if verify:
            try:
                store.verify()
            except BaseException:
                store.close()
                raise
        return store

    @property
    def driver(self) -> neo4j.Driver:
        return self.runner.driver

    @property
    def round_trips(self) -> int:
        """Statements sent so far on both drivers (``protocols.RoundTripCounter``)."""
        return self.runner.round_trips + self.aio.round_trips

    def verify(self) -> dict[str, Any]:
        """Check the server answers with these credentials and the database exists."""
        with map_neo4j_errors(self.runner.where):
            info = self.driver.get_server_info()
        component = self.runner.read("server/components")[0]
        return {
            "address": str(info.address),
            "agent": info.agent,
            "version": component["version"],
            "edition": component["edition"],
        }

    def with_namespace(self, namespace: str, *, existing: bool = False) -> Neo4jStore:
        """A store on the same driver (borrowed) for another namespace. ``existing``: a name
        the database holds, made before look-alike names were refused (see
        ``settings.validate_namespace``); only to list or delete it."""
        return Neo4jStore(
            self.driver,
            namespace=namespace,
            database=self.database,
            registry=self.runner.registry,
            vector_overfetch=self.vector_overfetch,
            tracer=self.runner.tracer,
            _where=self.runner.where,
            _aio=self.aio,
            _existing_name=existing,
        )

    def close(self) -> None:
        if self._owns_driver and not self._closed:
            self.aio.close()
            self.driver.close()
        self._closed = True

    async def aclose(self) -> None:
        """Close the async driver this event loop opened; call before the loop ends (``close``
        still closes the sync driver)."""
        await self.aio.aclose()

    def __enter__(self) -> Neo4jStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Neo4jStore(namespace={self.namespace!r}, database={self.database!r}, uri={self.runner.where!r})"
