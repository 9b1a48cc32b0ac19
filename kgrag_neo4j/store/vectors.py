"""Vector slots of Neo4jStore: which namespaces use which slot, dropping the slots nothing
uses, and the store side of re-embedding a namespace with another model (embed beside, switch
in one transaction, then remove the old vectors). What to embed and when is decided in
``kgrag_neo4j.ingestion.reembed``; this module only runs statements."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError, DimensionMismatchError, InputError
from ..validation import check_int
from .runner import CypherRunner

if TYPE_CHECKING:
    from .schema import SchemaStatus, VectorSlot

__all__ = ["ReembedState", "SlotUse", "VectorsMixin", "REEMBED_KINDS"]

#: what a re-embed embeds again: chunks (their content) and entities (name and description)
REEMBED_KINDS = ("chunk", "entity")
_PENDING = {"chunk": "namespaces/reembed_pending_chunks", "entity": "namespaces/reembed_pending_entities"}
_WRITE = {"chunk": "namespaces/reembed_write_chunks", "entity": "namespaces/reembed_write_entities"}


@dataclass(frozen=True, slots=True)
class SlotUse:
    """One vector slot: its size, its indexes and the namespaces recorded in it (a namespace
    being re-embedded is listed in both of its slots)."""

    slot: int
    dimensions: int
    chunk_index: str
    entity_index: str
    namespaces: tuple[str, ...] = field(default=())
    models: tuple[str, ...] = field(default=())

    def as_dict(self) -> dict[str, Any]:
        return {
            "slot": self.slot,
            "dimensions": self.dimensions,
            "chunk_index": self.chunk_index,
            "entity_index": self.entity_index,
            "namespaces": list(self.namespaces),
            "models": list(self.models),
        }


@dataclass(frozen=True, slots=True)
class ReembedState:
    """Where a namespace's re-embed stands: ``from_slot`` holds the vectors searches use until
    the switch, ``to_slot`` the new model's; ``switched`` once the namespace names the new
    model (the old vectors may still be being removed)."""

    model: str
    dimensions: int
    from_slot: int
    to_slot: int
    switched: bool


class VectorsMixin:
    runner: CypherRunner
    namespace: str
    _config: dict[str, Any] | None
    _checked_models: set[tuple[str, int]]

    if TYPE_CHECKING:  # defined by SchemaMixin

        def _read_embedding_config(self) -> dict[str, Any]: ...
        def _slot_for(self, config: dict[str, Any], dimensions: int, *, reembed: bool = False) -> VectorSlot: ...
        def wait_for_schema(self, *, timeout: float = 300.0) -> SchemaStatus: ...

    def vector_slots(self) -> list[SlotUse]:
        """Every slot the database records, with the namespaces (and models) in it."""
        from .schema import VectorSlot

        config = self._read_embedding_config()
        users: dict[int, list[tuple[str, str]]] = {}
        for r in self.runner.read("schema/slot_namespaces"):
            users.setdefault(int(r["slot"]), []).append((r["namespace"], r["model"]))
            if r["next_slot"] is not None:
                users.setdefault(int(r["next_slot"]), []).append((r["namespace"], r["next_model"]))
            if r["previous_slot"] is not None:
                users.setdefault(int(r["previous_slot"]), []).append((r["namespace"], "(being removed)"))
        out = []
        for number, dims in sorted(config["slots"].items()):
            slot = VectorSlot(number)
            found = users.get(number, [])
            out.append(
                SlotUse(
                    number,
                    dims,
                    slot.chunk_index,
                    slot.entity_index,
                    tuple(n for n, _ in found),
                    tuple(sorted({m for _, m in found if m})),
                )
            )
        return out

    def drop_unused_vector_slots(self, *, dry_run: bool = False) -> list[SlotUse]:
        """Drop the indexes of every slot no namespace names and no chunk or entity holds a
        vector in (its size is forgotten, so the slot can take another). Returns those slots."""
        from .schema import VectorSlot

        dropped = []
        for use in self.vector_slots():
            if use.namespaces:
                continue
            slot = VectorSlot(use.slot)
            if self.runner.read("schema/slot_in_use", vector_property=slot.vector_property)[0]["used"]:
                continue
            dropped.append(use)
            if dry_run:
                continue
            self.runner.schema("schema/drop_vector_indexes", chunk_index=slot.chunk_index, entity_index=slot.entity_index)
            self.runner.write("schema/forget_slot", slot=slot.number)
        self._forget_config()
        return dropped

    def _forget_config(self) -> None:
        """Read the namespace's record again on next use (a re-embed step changed it), and check
        query models against it again."""
        self._config = None
        self._checked_models = set()

    # -- re-embedding ---------------------------------------------------------------------------
    def begin_reembed(self, model: str, dimensions: int) -> ReembedState:
        """Start (or find) the re-embed of this namespace with ``model``: pick the slot its
        vectors go to (never the one searches read now), create its indexes, and record it on
        the namespace. A re-embed with another model in progress is refused; one with this
        model is resumed. A namespace already on ``model`` with nothing left to remove is
        returned as ``switched``."""
        from .schema import VectorSlot

        check_int(dimensions, "dimensions", minimum=1, maximum=4096)
        config = self._read_embedding_config()
        if config["namespace_dimensions"] is None:
            raise InputError(f"namespace {self.namespace!r} records no embedding model: nothing to re-embed")
        if config["next_model"] is not None and config["next_model"] != model:
            raise ConfigurationError(
                f"namespace {self.namespace!r} is being re-embedded with {config['next_model']!r}: finish that "
                f"first (`kgrag namespace reembed {self.namespace} --embedder ...` with that model)"
            )
        current = int(config["slot"] or 1)
        if config["next_model"] is None and config["model"] == model:
            # already on it: at most the old vectors are left to remove
            previous = config["previous_slot"]
            return ReembedState(model, dimensions, int(previous or current), current, switched=True)
        if config["next_slot"] is not None:
            target = VectorSlot(int(config["next_slot"]))
        else:
            target = self._slot_for(config, dimensions, reembed=True)
        self.runner.schema(target.schema_file, dimensions=dimensions)
        row = self.runner.write(
            "namespaces/reembed_begin", namespace=self.namespace, model=model, dimensions=dimensions, slot=target.number
        )[0]
        if row["slot_dimensions"] != dimensions:
            raise DimensionMismatchError(
                f"vector slot {target.number} holds {row['slot_dimensions']}-dimension vectors; {model!r} gives {dimensions}",
                expected=row["slot_dimensions"],
                got=dimensions,
            )
        if row["next_model"] != model:
            raise ConfigurationError(f"namespace {self.namespace!r} is being re-embedded with {row['next_model']!r}")
        self._forget_config()
        return ReembedState(model, dimensions, current, target.number, switched=False)

    def reembed_counts(self, state: ReembedState) -> dict[str, dict[str, int]]:
        """``{kind: {"total", "done"}}``: the chunks and entities with a vector in the old slot,
        and how many of them have one in the new slot already."""
        from .schema import VectorSlot

        row = self.runner.read(
            "namespaces/reembed_counts",
            namespace=self.namespace,
            old_property=VectorSlot(state.from_slot).vector_property,
            new_property=VectorSlot(state.to_slot).vector_property,
        )[0]
        return {kind: {"total": int(row[f"{kind}_total"]), "done": int(row[f"{kind}_done"])} for kind in REEMBED_KINDS}

    def reembed_pending(self, state: ReembedState, kind: str, *, after: str = "", limit: int = 256) -> list[dict[str, Any]]:
        """Up to ``limit`` chunks (``id``, ``text``: the content) or entities (``id``, ``name``,
        ``description``) of the namespace, by id after ``after``, that have an old vector and no
        new one yet."""
        from .schema import VectorSlot

        check_int(limit, "limit", minimum=1)
        return self.runner.read(
            _PENDING[_kind(kind)],
            namespace=self.namespace,
            after=after,
            limit=limit,
            old_property=VectorSlot(state.from_slot).vector_property,
            new_property=VectorSlot(state.to_slot).vector_property,
        )

    def write_reembedded(self, state: ReembedState, kind: str, rows: list[dict[str, Any]]) -> int:
        """Store the new model's vectors (``[{id, embedding}]``) beside the old ones; searches do
        not see them until the switch. Returns the vectors written."""
        from .schema import VectorSlot, checked_vector

        checked = [
            {"id": r["id"], "embedding": checked_vector(r["embedding"], state.dimensions, f"{kind} {r['id']} vector")}
            for r in rows
        ]
        if not checked:
            return 0
        return int(
            self.runner.write(
                _WRITE[_kind(kind)],
                namespace=self.namespace,
                rows=checked,
                vector_property=VectorSlot(state.to_slot).vector_property,
            )[0]["written"]
        )

    def switch_reembed(self, state: ReembedState) -> dict[str, int]:
        """In one transaction, make the namespace use the new model's slot, if every chunk and
        entity with an old vector has a new one (otherwise nothing changes). Returns the counts
        still missing (``chunks``, ``entities``) and ``switched`` (1 or 0)."""
        from .schema import VectorSlot

        rows = self.runner.write(
            "namespaces/reembed_switch",
            namespace=self.namespace,
            model=state.model,
            old_property=VectorSlot(state.from_slot).vector_property,
            new_property=VectorSlot(state.to_slot).vector_property,
        )
        self._forget_config()
        if not rows:  # the record names no re-embed with this model: switched before, or never begun
            switched = self._read_embedding_config()["model"] == state.model
            return {"chunks": 0, "entities": 0, "switched": int(switched)}
        row = rows[0]
        return {
            "chunks": int(row["missing_chunks"]),
            "entities": int(row["missing_entities"]),
            "switched": int(bool(row["switched"])),
        }

    def clear_old_vectors(self, state: ReembedState, *, batch_size: int = 5000) -> int:
        """Remove up to ``batch_size`` old vectors of chunks and of entities (after the switch);
        the batch that finds none left forgets the old slot on the namespace. Returns how many
        were removed (0: done)."""
        from .schema import VectorSlot

        check_int(batch_size, "batch_size", minimum=1)
        if state.from_slot == state.to_slot:
            return 0
        rows = self.runner.write(
            "namespaces/reembed_clear_batch",
            namespace=self.namespace,
            batch_size=batch_size,
            old_property=VectorSlot(state.from_slot).vector_property,
            slot=state.to_slot,
        )
        self._forget_config()
        return int(rows[0]["removed"]) if rows else 0


def _kind(kind: str) -> str:
    if kind not in REEMBED_KINDS:
        raise InputError(f"kind must be one of {', '.join(REEMBED_KINDS)}, got {kind!r}")
    return kind
