"""Schema capability of Neo4jStore: constraints, vector and full-text indexes, embedding config.

The embedding dimensions are recorded once per database (the vector indexes are database-wide)
and the embedding model once per namespace; a later write or query with other dimensions, or
with another model in the same namespace, is refused naming both.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigurationError, DimensionMismatchError, InputError, SchemaNotReady
from ..validation import check_int
from .aio import AsyncDrivers
from .runner import CypherRunner, Plan, Read

__all__ = ["SchemaMixin", "SchemaStatus", "REQUIRED_INDEXES"]

#: Indexes kgrag needs, by name; the constraint-backing ones are named like their constraint.
REQUIRED_INDEXES = (
    "chunk_content",
    "chunk_embedding",
    "chunk_id",
    "community_id",
    "document_id",
    "entity_embedding",
    "entity_id",
    "entity_text",
)


@dataclass
class SchemaStatus:
    indexes: list[dict[str, Any]]
    dimensions: int | None
    model: str | None
    namespace: str

    @property
    def ready(self) -> bool:
        states = {i["name"]: i["state"] for i in self.indexes}
        return all(states.get(name) == "ONLINE" for name in REQUIRED_INDEXES)

    @property
    def missing(self) -> list[str]:
        names = {i["name"] for i in self.indexes}
        return [n for n in REQUIRED_INDEXES if n not in names]

    def as_dict(self) -> dict[str, Any]:
        return {
            "ready": self.ready,
            "namespace": self.namespace,
            "dimensions": self.dimensions,
            "model": self.model,
            "missing": self.missing,
            "indexes": self.indexes,
        }


def _chunk_text_namespaced(indexes: list[dict[str, Any]]) -> bool:
    """Whether the ``chunk_content`` index among ``indexes`` holds the namespace field."""
    return any(i["name"] == "chunk_content" and "namespace" in (i["properties"] or []) for i in indexes)


class SchemaMixin:
    runner: CypherRunner
    namespace: str
    aio: AsyncDrivers
    _dimensions: int | None
    _model: str | None
    _chunk_text_namespaced: bool | None = None
    _config: dict[str, Any] | None = None
    #: (model, dimensions) pairs found compatible, made on first use
    _checked_models: set[tuple[str, int]]

    def init_schema(self, dimensions: int, *, model: str | None = None, timeout: float = 300.0) -> SchemaStatus:
        """Create constraints and indexes idempotently and wait until they are ONLINE.

        ``dimensions`` must match what the database already records (vector indexes cannot
        change dimensions in place); ``model`` is recorded for this namespace when given.
        """
        check_int(dimensions, "dimensions", minimum=1, maximum=4096)
        existing = self._read_embedding_config()
        if existing["dimensions"] is not None and existing["dimensions"] != dimensions:
            raise DimensionMismatchError(
                f"the database records embeddings of {existing['dimensions']} dimensions; "
                f"{dimensions} were asked. Use an embedder of {existing['dimensions']} dimensions, "
                "or a new database",
                expected=existing["dimensions"],
                got=dimensions,
            )
        self.runner.schema("schema/constraints")
        self.runner.schema("schema/vector_indexes", dimensions=dimensions)
        self.runner.schema("schema/fulltext_indexes")
        indexes = self.runner.read("schema/index_status")
        if not _chunk_text_namespaced(indexes):
            # made by an earlier version (content only): make it again with the namespace field
            self.runner.schema("schema/drop_chunk_content")
            self.runner.schema("schema/fulltext_indexes")
        index_dims = {i["name"]: i["dimensions"] for i in indexes if i["dimensions"]}
        for name, dims in index_dims.items():
            if dims != dimensions:
                raise DimensionMismatchError(
                    f"vector index {name} has {dims} dimensions; {dimensions} were asked",
                    expected=dims,
                    got=dimensions,
                )
        self.record_embedding_config(model or "unknown", dimensions)
        status = self.wait_for_schema(timeout=timeout)
        self.runner.write("schema/record_chunk_text_namespaced")
        self._chunk_text_namespaced = True
        return status

    def wait_for_schema(self, *, timeout: float = 300.0) -> SchemaStatus:
        deadline = time.monotonic() + timeout
        while True:
            status = self.schema_status()
            if status.ready:
                return status
            failed = [i["name"] for i in status.indexes if i["state"] == "FAILED"]
            if failed:
                raise SchemaNotReady(f"index(es) failed to populate: {', '.join(failed)}")
            if time.monotonic() > deadline:
                pending = [i["name"] for i in status.indexes if i["state"] != "ONLINE"] + status.missing
                raise SchemaNotReady(f"indexes not ONLINE after {timeout:.0f}s: {', '.join(pending)}")
            time.sleep(0.2)

    def schema_status(self) -> SchemaStatus:
        indexes = self.runner.read("schema/index_status")
        config = self._read_embedding_config()
        return SchemaStatus(
            indexes=indexes,
            dimensions=config["dimensions"],
            model=config["model"],
            namespace=self.namespace,
        )

    def _read_embedding_config(self) -> dict[str, Any]:
        return self.runner.run(self._embedding_config())

    def _embedding_config(self) -> Plan[dict[str, Any]]:
        """Read what the database records (dimensions, this namespace's model, whether the chunk
        full-text index holds the namespace) and remember it: a read ``Plan``."""
        rows = yield Read("schema/get_embedding_config", {"namespace": self.namespace})
        row = rows[0] if rows else {}
        self._chunk_text_namespaced = bool(row.get("chunk_text_namespaced"))
        self._config = {
            "dimensions": row.get("dimensions"),
            "model": row.get("model"),
            "namespace_dimensions": row.get("namespace_dimensions"),
        }
        return dict(self._config)

    def chunk_text_namespaced(self) -> bool:
        """Whether the chunk full-text index holds the namespace field (read once per store),
        i.e. whether keyword queries may name their namespace."""
        return self.runner.run(self._chunk_text_is_namespaced())

    def _chunk_text_is_namespaced(self) -> Plan[bool]:
        if getattr(self, "_chunk_text_namespaced", None) is None:
            yield from self._embedding_config()
        return bool(self._chunk_text_namespaced)

    def record_embedding_config(self, model: str, dimensions: int) -> None:
        """Record the model for this namespace (first time) and refuse a mismatch."""
        row = self.runner.write(
            "schema/record_embedding_config",
            namespace=self.namespace,
            model=model,
            dimensions=dimensions,
        )[0]
        if row["dimensions"] != dimensions:
            raise DimensionMismatchError(
                f"the database records {row['dimensions']}-dimension embeddings; "
                f"embedder {model!r} gives {dimensions}",
                expected=row["dimensions"],
                got=dimensions,
            )
        if model != "unknown" and row["model"] not in (model, "unknown"):
            raise ConfigurationError(
                f"namespace {self.namespace!r} was embedded with {row['model']!r}; "
                f"embedder {model!r} would give incomparable vectors. Use {row['model']!r}, "
                f"another namespace, or start this one over (`kgrag namespace delete {self.namespace}`)"
            )
        self._dimensions = row["dimensions"]
        self._model = row["model"]
        self._config = {"dimensions": row["dimensions"], "model": row["model"],
                        "namespace_dimensions": row["namespace_dimensions"]}

    def ensure_embedder(self, model: str, dimensions: int) -> None:
        """Make the schema ready for this embedder: create indexes when the database has none,
        otherwise check dimensions and model. Cheap after the first call."""
        if self._dimensions == dimensions and self._model in (model, "unknown"):
            return
        config = self._read_embedding_config()
        if config["dimensions"] is None or not self._chunk_text_namespaced:
            # no schema yet, or one made by an earlier version: create or bring it up to date
            self.init_schema(dimensions, model=model)
        else:
            self.record_embedding_config(model, dimensions)

    def check_embedder(self, model: str, dimensions: int) -> None:
        """Refuse a query embedder whose vectors cannot be compared with the stored ones.
        Reads only; a namespace with nothing recorded accepts any model of the right size.
        A model found compatible is remembered, so retrievers may call this on every query."""
        self.runner.run(self._check_embedder(model, dimensions))

    async def acheck_embedder(self, model: str, dimensions: int) -> None:
        """``check_embedder`` on the async driver (what ``aretrieve`` calls)."""
        await self.aio.run(self._check_embedder(model, dimensions))

    def _check_embedder(self, model: str, dimensions: int) -> Plan[None]:
        if (model, dimensions) in self._compatible_models():
            return
        # what this store last read or recorded (a write path reads it first), else one read
        if self._config:
            config = dict(self._config)
        else:
            config = yield from self._embedding_config()
        if config["dimensions"] is None:
            raise SchemaNotReady("no schema in this database yet: run `kgrag init` or ingest something first")
        if config["dimensions"] != dimensions:
            raise DimensionMismatchError(
                f"embedder {model!r} gives {dimensions}-dimension vectors; the database holds "
                f"{config['dimensions']}-dimension ones",
                expected=config["dimensions"],
                got=dimensions,
            )
        if config["model"] not in (None, "unknown", model):
            raise ConfigurationError(
                f"namespace {self.namespace!r} was embedded with {config['model']!r}, not {model!r}; "
                f"use an embedder of that model (--embedder), another namespace, or start this one "
                f"over (`kgrag namespace delete {self.namespace}`)"
            )
        self._dimensions = dimensions
        self._compatible_models().add((model, dimensions))

    def _compatible_models(self) -> set[tuple[str, int]]:
        found = getattr(self, "_checked_models", None)
        if found is None:
            found = self._checked_models = set()
        return found

    def expected_dimensions(self) -> int:
        return self.runner.run(self._expected_dimensions())

    def _expected_dimensions(self) -> Plan[int]:
        if self._dimensions is None:
            dims = (yield from self._embedding_config())["dimensions"]
            if dims is None:
                raise SchemaNotReady(
                    "no schema in this database yet: run `kgrag init --dimensions N` "
                    "(or store.init_schema(N))"
                )
            self._dimensions = dims
        return self._dimensions

    def check_embedding(self, embedding: Any, *, what: str = "embedding") -> list[float]:
        if self._dimensions is not None:  # known: no plan to run (a bulk write checks 1,000s)
            return checked_vector(embedding, self._dimensions, what)
        return self.runner.run(self._check_embedding(embedding, what))

    def _check_embedding(self, embedding: Any, what: str) -> Plan[list[float]]:
        """``check_embedding`` as a read ``Plan``: the sync and async read paths share it."""
        dims = yield from self._expected_dimensions()
        return checked_vector(embedding, dims, what)


def checked_vector(embedding: Any, dims: int, what: str) -> list[float]:
    """``embedding`` as a list of ``dims`` finite floats, or the error that names ``what``."""
    try:
        vector = list(map(float, embedding))
    except (TypeError, ValueError):
        raise InputError(f"{what} is not a list of numbers") from None
    if len(vector) != dims:
        raise DimensionMismatchError(
            f"{what} has {len(vector)} dimensions; the database's vector index has {dims}",
            expected=dims,
            got=len(vector),
        )
    # a finite sum has finite terms (one C loop); an infinite one may only have overflowed
    if not math.isfinite(sum(vector)) and not all(map(math.isfinite, vector)):
        raise InputError(f"{what} contains NaN or infinity")
    return vector
