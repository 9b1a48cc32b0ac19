"""Schema capability of Neo4jStore: constraints, vector and full-text indexes, embedding config.

Vectors live in *slots*: slot 1 is the ``embedding`` property with the ``chunk_embedding`` and
``entity_embedding`` indexes (what every database made before slots has), slot N the
``embedding_N`` property with ``chunk_embedding_N`` and ``entity_embedding_N``. A slot holds
one vector size; a namespace records its model, size and slot, and every statement that
reads or writes its vectors takes the slot's property and index names as parameters. So
namespaces embedded by models of different sizes share one database, and a namespace being
re-embedded keeps its old vectors in one slot while the new ones fill another. A write or
query whose size or model differs from what its namespace records is refused naming both.
A namespace with nothing recorded reads slot 1 (as before slots).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError, DimensionMismatchError, InputError, SchemaNotReady
from ..steps import Steps, run_steps, twin_methods
from ..validation import check_int
from .aio import AsyncDrivers, Read
from .runner import CypherRunner

__all__ = [
    "BASE_INDEXES",
    "ENTITY_GRAPH_INDEXES",
    "REQUIRED_INDEXES",
    "SchemaMixin",
    "SchemaStatus",
    "VECTOR_SLOTS",
    "VectorSlot",
]

#: The vector slots a database can hold (one schema file each: a property cannot be a parameter
#: of CREATE INDEX); each holds one vector size at a time.
VECTOR_SLOTS = (1, 2, 3, 4)

#: Each slot's schema file, by slot number.
_SLOT_FILES = {
    1: "schema/vector_indexes",
    2: "schema/vector_indexes_2",
    3: "schema/vector_indexes_3",
    4: "schema/vector_indexes_4",
}

#: Indexes kgrag needs whatever the vector sizes, by name; the constraint-backing ones are named
#: like their constraint.
BASE_INDEXES = ("chunk_content", "chunk_id", "chunk_names", "community_id", "document_id", "entity_id", "entity_text")
#: what keeping an entity graph current looks its work up by (made with the rest by init_schema;
#: a database made before them gets them from ensure_entity_graph_schema)
ENTITY_GRAPH_INDEXES = ("chunk_names", "chunk_relink", "entity_name_first")
#: The indexes of a database with one vector size (slot 1), as before slots.
REQUIRED_INDEXES = tuple(sorted((*BASE_INDEXES, "chunk_embedding", "entity_embedding")))


@dataclass(frozen=True, slots=True)
class VectorSlot:
    """Where one vector size lives: its property on chunks and entities and its two indexes.
    Names come from the slot number only (an allow-list), never from stored or given text."""

    number: int

    def __post_init__(self) -> None:
        if self.number not in VECTOR_SLOTS:
            raise InputError(f"vector slot {self.number!r} is not one of {', '.join(map(str, VECTOR_SLOTS))}")

    @property
    def suffix(self) -> str:
        return "" if self.number == 1 else f"_{self.number}"

    @property
    def vector_property(self) -> str:
        return "embedding" + self.suffix

    @property
    def chunk_index(self) -> str:
        return "chunk_embedding" + self.suffix

    @property
    def entity_index(self) -> str:
        return "entity_embedding" + self.suffix

    @property
    def schema_file(self) -> str:
        return _SLOT_FILES[self.number]

    def params(self) -> dict[str, str]:
        """The parameters a vector statement takes for this slot."""
        return {"vector_property": self.vector_property, "chunk_index": self.chunk_index, "entity_index": self.entity_index}


@dataclass
class SchemaStatus:
    indexes: list[dict[str, Any]]
    dimensions: int | None
    model: str | None
    namespace: str
    #: slot number -> vector size, for every slot the database records
    slots: dict[int, int] | None = None
    #: this namespace's slot (None: nothing recorded; it reads slot 1)
    slot: int | None = None

    @property
    def required(self) -> list[str]:
        names = list(BASE_INDEXES)
        for number in sorted(self.slots or {1: 0}):
            names += [VectorSlot(number).chunk_index, VectorSlot(number).entity_index]
        return sorted(names)

    @property
    def ready(self) -> bool:
        states = {i["name"]: i["state"] for i in self.indexes}
        return all(states.get(name) == "ONLINE" for name in self.required)

    @property
    def missing(self) -> list[str]:
        names = {i["name"] for i in self.indexes}
        return [n for n in self.required if n not in names]

    def as_dict(self) -> dict[str, Any]:
        return {
            "ready": self.ready,
            "namespace": self.namespace,
            "dimensions": self.dimensions,
            "model": self.model,
            "slot": self.slot,
            "slots": {str(k): v for k, v in sorted((self.slots or {}).items())},
            "missing": self.missing,
            "indexes": self.indexes,
        }


def _chunk_text_namespaced(indexes: list[dict[str, Any]]) -> bool:
    """Whether the ``chunk_content`` index among ``indexes`` holds the namespace field."""
    return any(i["name"] == "chunk_content" and "namespace" in (i["properties"] or []) for i in indexes)


def _sizes(slots: dict[int, int]) -> str:
    return ", ".join(str(d) for d in sorted(set(slots.values()))) or "no"


class SchemaMixin:
    runner: CypherRunner
    namespace: str
    aio: AsyncDrivers
    _dimensions: int | None
    _model: str | None
    _chunk_text_namespaced: bool | None = None
    _entity_graph_schema: bool = False
    _config: dict[str, Any] | None = None
    #: (model, dimensions) pairs found compatible, made on first use
    _checked_models: set[tuple[str, int]]
    #: the (model, slot) the last read found: when it changes, the checks above start over
    _seen_model: tuple[str | None, int | None]

    if TYPE_CHECKING:  # the documents capability

        def has_embedded_chunks(self) -> bool: ...

    def init_schema(self, dimensions: int, *, model: str | None = None, timeout: float = 300.0) -> SchemaStatus:
        """Create constraints and indexes idempotently and wait until they are ONLINE.

        The vectors go to the slot this namespace records, else to a slot holding vectors of
        ``dimensions`` already, else to a free one (whose indexes are created); ``model`` is
        recorded for this namespace when given. A namespace recorded with another size is refused.
        """
        check_int(dimensions, "dimensions", minimum=1, maximum=4096)
        config = self._read_embedding_config()
        slot = self._slot_for(config, dimensions)
        self.runner.schema("schema/constraints")
        self.runner.schema(slot.schema_file, dimensions=dimensions)
        self.runner.schema("schema/fulltext_indexes")
        indexes = self.runner.read("schema/index_status")
        if not _chunk_text_namespaced(indexes):
            # made by an earlier version (content only): make it again with the namespace field
            self.runner.schema("schema/drop_chunk_content")
            self.runner.schema("schema/fulltext_indexes")
        for i in indexes:
            if i["name"] in (slot.chunk_index, slot.entity_index) and i["dimensions"] not in (None, dimensions):
                raise DimensionMismatchError(
                    f"vector index {i['name']} has {i['dimensions']} dimensions; {dimensions} were asked",
                    expected=i["dimensions"],
                    got=dimensions,
                )
        self.record_embedding_config(model or "unknown", dimensions, slot=slot.number)
        status = self.wait_for_schema(timeout=timeout)
        self.runner.write("schema/record_chunk_text_namespaced")
        self._chunk_text_namespaced = True
        return status

    def _slot_for(self, config: dict[str, Any], dimensions: int, *, reembed: bool = False) -> VectorSlot:
        """The slot vectors of ``dimensions`` go to for this namespace: the one it records,
        else one holding that size, else a free one. ``reembed``: a slot beside the current one
        (never the one holding the namespace's vectors now)."""
        slots: dict[int, int] = config["slots"]
        current = config["slot"]
        if not reembed:
            if config["namespace_dimensions"] is not None:
                if config["namespace_dimensions"] != dimensions:
                    raise DimensionMismatchError(
                        f"namespace {self.namespace!r} holds {config['namespace_dimensions']}-dimension vectors "
                        f"(embedder {config['model']!r}); {dimensions} were asked. Use an embedder of "
                        f"{config['namespace_dimensions']} dimensions, another namespace, or "
                        f"`kgrag namespace reembed {self.namespace} --embedder NAME`",
                        expected=config["namespace_dimensions"],
                        got=dimensions,
                    )
                return VectorSlot(current or 1)
            if 1 in slots and slots[1] != dimensions and self.has_embedded_chunks():
                # chunks written without a recorded model live in slot 1: they keep its size
                raise DimensionMismatchError(
                    f"namespace {self.namespace!r} holds {slots[1]}-dimension vectors; {dimensions} were asked",
                    expected=slots[1],
                    got=dimensions,
                )
        busy = {current or 1} if reembed else set()
        same = [n for n, d in sorted(slots.items()) if d == dimensions and n not in busy]
        if same:
            return VectorSlot(same[0])
        free = [n for n in VECTOR_SLOTS if n not in slots and n not in busy]
        if free:
            return VectorSlot(free[0])
        raise DimensionMismatchError(
            f"the database's {len(VECTOR_SLOTS)} vector slots hold {_sizes(slots)}-dimension vectors; {dimensions} "
            "were asked. Drop the slots no namespace uses (`kgrag schema drop-unused`) or use a model of one of those sizes",
            expected=min(slots.values()),
            got=dimensions,
        )

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
            slots=dict(config["slots"]),
            slot=config["slot"],
        )

    def embedding_model(self) -> str | None:
        """The embedding model this namespace records (None: nothing recorded; 'unknown':
        its size only). Read afresh: a re-embed switches it."""
        return self._read_embedding_config()["model"]

    def _read_embedding_config(self) -> dict[str, Any]:
        return run_steps(self._embedding_config())

    def _embedding_config(self) -> Steps[dict[str, Any]]:
        """Read what the database records (its vector slots; this namespace's model, size and
        slot, and a re-embed in progress; whether the chunk full-text index holds the namespace)
        and remember it: a read body (``steps``)."""
        rows = yield from Read(self, "schema/get_embedding_config", {"namespace": self.namespace})
        row = rows[0] if rows else {}
        self._chunk_text_namespaced = bool(row.get("chunk_text_namespaced"))
        slots = {int(s["slot"]): int(s["dimensions"]) for s in row.get("slots") or [] if s.get("dimensions")}
        recorded = row.get("namespace_dimensions")
        slot = row.get("slot") or (1 if recorded is not None else None)
        self._config = {
            "slots": slots,
            "model": row.get("model"),
            "namespace_dimensions": recorded,
            "slot": slot,
            # what the namespace's vectors measure: its record's, else slot 1's (where chunks
            # written without a record live)
            "dimensions": recorded if recorded is not None else slots.get(1),
            "next_model": row.get("next_model"),
            "next_dimensions": row.get("next_dimensions"),
            "next_slot": row.get("next_slot"),
            "previous_slot": row.get("previous_slot"),
        }
        self._dimensions = self._config["dimensions"]
        seen = (self._config["model"], slot)
        if getattr(self, "_seen_model", seen) != seen:
            # the namespace switched models (a re-embed): what was found compatible no longer is
            self._checked_models = set()
            self._model = None
        self._seen_model = seen
        return dict(self._config)

    def vector_slot(self) -> VectorSlot:
        """The slot this namespace's vectors are in (slot 1 when nothing is recorded)."""
        return run_steps(self._vector_slot())

    def _vector_slot(self, dimensions: int | None = None) -> Steps[VectorSlot]:
        """The namespace's slot; with nothing recorded, the slot holding ``dimensions`` (a
        query of another size than slot 1's finds an empty namespace there, not an error)."""
        config = self._config if self._config is not None else (yield from self._embedding_config())
        if config["slot"] is not None:
            return VectorSlot(config["slot"])
        if dimensions is not None and config["slots"].get(1) != dimensions:
            same = [n for n, d in sorted(config["slots"].items()) if d == dimensions]
            if same:
                return VectorSlot(same[0])
        return VectorSlot(1)

    def vector_params(self) -> dict[str, str]:
        """The slot parameters (``vector_property``, ``chunk_index``, ``entity_index``) of this
        namespace's vector statements, as ``kgrag cypher params`` prints them."""
        return run_steps(self._vector_slot()).params()

    def _query_vector(self, embedding: Any, what: str = "query embedding") -> Steps[tuple[list[float], dict[str, str]]]:
        """A query vector checked against the namespace's size, and the slot parameters to
        search it with."""
        config = self._config if self._config is not None else (yield from self._embedding_config())
        slot = yield from self._vector_slot(_length(embedding))
        dims = config["slots"].get(slot.number) if config["slot"] is None else config["namespace_dimensions"]
        if dims is None:
            raise SchemaNotReady("no schema in this database yet: run `kgrag init --dimensions N` (or store.init_schema(N))")
        return checked_vector(embedding, dims, what), slot.params()

    def chunk_text_namespaced(self) -> bool:
        """Whether the chunk full-text index holds the namespace field (read once per store),
        i.e. whether keyword queries may name their namespace."""
        return run_steps(self._chunk_text_is_namespaced())

    def _chunk_text_is_namespaced(self) -> Steps[bool]:
        if getattr(self, "_chunk_text_namespaced", None) is None:
            yield from self._embedding_config()
        return bool(self._chunk_text_namespaced)

    def record_embedding_config(self, model: str, dimensions: int, *, slot: int | None = None) -> None:
        """Record the model, size and slot for this namespace (first time) and refuse a mismatch.
        ``slot``: where its vectors go (default: the one chosen for ``dimensions``)."""
        if slot is None:
            slot = self._slot_for(self._read_embedding_config(), dimensions).number
        row = self.runner.write(
            "schema/record_embedding_config",
            namespace=self.namespace,
            model=model,
            dimensions=dimensions,
            slot=VectorSlot(slot).number,
        )[0]
        if row["slot_dimensions"] != dimensions:
            raise DimensionMismatchError(
                f"vector slot {slot} holds {row['slot_dimensions']}-dimension embeddings; embedder {model!r} gives {dimensions}",
                expected=row["slot_dimensions"],
                got=dimensions,
            )
        if row["namespace_dimensions"] != dimensions:
            raise DimensionMismatchError(
                f"namespace {self.namespace!r} holds {row['namespace_dimensions']}-dimension vectors; "
                f"embedder {model!r} gives {dimensions}",
                expected=row["namespace_dimensions"],
                got=dimensions,
            )
        if model != "unknown" and row["model"] not in (model, "unknown"):
            raise ConfigurationError(
                f"namespace {self.namespace!r} was embedded with {row['model']!r}; "
                f"embedder {model!r} would give incomparable vectors. Use {row['model']!r}, "
                f"another namespace, `kgrag namespace reembed {self.namespace} --embedder NAME`, or start "
                f"this one over (`kgrag namespace delete {self.namespace}`)"
            )
        self._model = row["model"]
        self._read_embedding_config()

    def ensure_entity_graph_schema(self, *, timeout: float = 300.0) -> None:
        """Make sure the indexes keeping an entity graph current uses exist and are ONLINE
        (a database initialised by an earlier version lacks them). One read after the first call."""
        if self._entity_graph_schema:
            return
        indexes = {i["name"]: i["state"] for i in self.runner.read("schema/index_status")}
        if any(indexes.get(name) != "ONLINE" for name in ENTITY_GRAPH_INDEXES):
            self.runner.schema("schema/constraints")
            self.runner.schema("schema/fulltext_indexes")
            deadline = time.monotonic() + timeout
            while True:
                indexes = {i["name"]: i["state"] for i in self.runner.read("schema/index_status")}
                if all(indexes.get(name) == "ONLINE" for name in ENTITY_GRAPH_INDEXES):
                    break
                if any(indexes.get(name) == "FAILED" for name in ENTITY_GRAPH_INDEXES) or time.monotonic() > deadline:
                    raise SchemaNotReady(
                        "indexes not ONLINE: " + ", ".join(n for n in ENTITY_GRAPH_INDEXES if indexes.get(n) != "ONLINE")
                    )
                time.sleep(0.2)
        self._entity_graph_schema = True

    def ensure_embedder(self, model: str, dimensions: int) -> None:
        """Make the schema ready for this embedder: create the indexes its size needs,
        otherwise check size and model. Cheap after the first call. Refused while the
        namespace is being re-embedded (its chunks would miss the new model's vectors)."""
        if self._dimensions == dimensions and self._model == model:
            return
        config = self._read_embedding_config()
        if config["next_model"] is not None:
            raise ConfigurationError(
                f"namespace {self.namespace!r} is being re-embedded with {config['next_model']!r}: write to it "
                f"once `kgrag namespace reembed {self.namespace} --embedder ...` has finished"
            )
        if config["namespace_dimensions"] is not None and config["slot"] in config["slots"] and self._chunk_text_namespaced:
            self.record_embedding_config(model, dimensions, slot=config["slot"])
            return
        slot = self._slot_for(config, dimensions)
        if slot.number in config["slots"] and self._chunk_text_namespaced:
            self.record_embedding_config(model, dimensions, slot=slot.number)
        else:
            # a new slot, no schema yet, or one made by an earlier version: create or update it
            self.init_schema(dimensions, model=model)

    def _check_embedder(self, model: str, dimensions: int) -> Steps[None]:
        """Refuse a query embedder whose vectors cannot be compared with the stored ones.
        Reads only; a namespace with nothing recorded accepts any model a slot can hold.
        A model found compatible is remembered, so retrievers may call this on every query."""
        if (model, dimensions) in self._compatible_models():
            return
        # what this store last read or recorded (a write path reads it first), else one read
        if self._config:
            config = dict(self._config)
        else:
            config = yield from self._embedding_config()
        if not config["slots"]:
            raise SchemaNotReady("no schema in this database yet: run `kgrag init` or ingest something first")
        held = config["namespace_dimensions"]
        if held is not None and held != dimensions:
            raise DimensionMismatchError(
                f"embedder {model!r} gives {dimensions}-dimension vectors; namespace {self.namespace!r} holds "
                f"{held}-dimension ones (embedder {config['model']!r})",
                expected=held,
                got=dimensions,
            )
        if held is None and dimensions not in config["slots"].values() and len(config["slots"]) == len(VECTOR_SLOTS):
            raise DimensionMismatchError(
                f"embedder {model!r} gives {dimensions}-dimension vectors; the database holds "
                f"{_sizes(config['slots'])}-dimension ones in all its vector slots",
                expected=min(config["slots"].values()),
                got=dimensions,
            )
        if config["model"] not in (None, "unknown", model):
            raise ConfigurationError(
                f"namespace {self.namespace!r} was embedded with {config['model']!r}, not {model!r}; "
                f"use an embedder of that model (--embedder), another namespace, or start this one "
                f"over (`kgrag namespace delete {self.namespace}`)"
            )
        self._compatible_models().add((model, dimensions))

    check_embedder, acheck_embedder = twin_methods(_check_embedder)

    def _compatible_models(self) -> set[tuple[str, int]]:
        found = getattr(self, "_checked_models", None)
        if found is None:
            found = self._checked_models = set()
        return found

    def expected_dimensions(self) -> int:
        return run_steps(self._expected_dimensions())

    def _expected_dimensions(self) -> Steps[int]:
        if self._dimensions is None:
            dims = (yield from self._embedding_config())["dimensions"]
            if dims is None:
                raise SchemaNotReady("no schema in this database yet: run `kgrag init --dimensions N` (or store.init_schema(N))")
            self._dimensions = dims
        return self._dimensions

    def check_embedding(self, embedding: Any, *, what: str = "embedding") -> list[float]:
        if self._dimensions is not None:  # known: no body to run (a bulk write checks 1,000s)
            return checked_vector(embedding, self._dimensions, what)
        return run_steps(self._check_embedding(embedding, what))

    def _check_embedding(self, embedding: Any, what: str) -> Steps[list[float]]:
        """``check_embedding`` as a read body: the sync and async read paths share it."""
        dims = yield from self._expected_dimensions()
        return checked_vector(embedding, dims, what)


def _length(embedding: Any) -> int | None:
    try:
        return len(embedding)
    except TypeError:
        return None


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
