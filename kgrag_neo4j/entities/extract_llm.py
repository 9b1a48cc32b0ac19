"""Entity and relationship extraction with a chat model (GraphRAG style).

Chunks are sent in batches; the model answers with JSON::

    {"entities": [{"name", "type", "description", "chunk_ids": [...]}],
     "relationships": [{"source", "target", "type", "strength", "description"}]}

Nothing the model says is trusted. Validation mirrors the chunk-edge rules:

- an entity whose name is empty once normalised is dropped (``empty_name``), and so is one
  whose name is longer than ``MAX_ENTITY_NAME_CHARS`` (``long_name``): a name is indexed, and the
  database refuses to index a value that large (the whole write would fail);
- chunk ids not in the batch are dropped (``unknown_chunk``); an entity left with none is
  grounded by a whole-word search of its name in the batch's chunks, and dropped if that finds
  nothing either (``ungrounded``) -- every entity must be mentioned by some chunk;
- a relationship endpoint must name an entity extracted in the same batch or one of the
  ``known_entities`` (``unknown_endpoint``); a relation of an entity to itself is dropped
  (``self_relation``); a strength that is not a number in [0, 1] is dropped (``bad_strength``);
  a missing strength counts as 1.0, GraphRAG's default weight;
- with ``strict_types`` (the user declared the types), an entity whose type is not one of
  ``entity_types`` is dropped (``unknown_entity_type``), and so is a relationship whose type
  is not one of ``relation_types`` (``unknown_relation_type``);
- a batch whose call fails or whose reply is not the JSON above is logged at WARNING and
  skipped (``failed_batch``); the other batches still count. When every batch fails,
  ``extract`` raises the first batch's error (its class, saying so): nothing was extracted,
  and a build must not report "0 entities" as if the text held none.

Batches run on ``workers`` threads; results are merged in batch order (see
``kgrag_neo4j.entities.merging``), so the output does not depend on thread timing.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from ..errors import ConfigurationError, KgragError, ProviderResponseError
from ..protocols import ChatProvider
from ..types.entities import (
    MAX_ENTITY_NAME_CHARS,
    Entity,
    EntityMention,
    EntityRelation,
    ExtractionResult,
    normalise_name,
    normalise_type,
)
from ..validation import check_int
from .merging import finite_unit, merge_results

__all__ = ["DEFAULT_ENTITY_TYPES", "ExtractionSchema", "LLMEntityExtractor", "TextUnit", "parse_json_reply"]

DEFAULT_ENTITY_TYPES = ("PERSON", "ORGANIZATION", "LOCATION", "EVENT", "CONCEPT", "OTHER")

_SPACES = re.compile(r"\s+")
_NON_WORD = re.compile(r"[^0-9A-Za-z]+")


class TextUnit(Protocol):
    """What the extractors read: ``kgrag_neo4j.types.Chunk`` satisfies it."""

    id: str
    content: str


def parse_json_reply(text: str) -> Any:
    """The JSON value in a model's reply, tolerating ```json fences and prose around it
    (:func:`kgrag_neo4j.replies.find_json`).

    Raises ``ProviderResponseError`` (with an excerpt) when no JSON value can be found.
    """
    from ..replies import find_json  # Why here: pydantic is slow to import

    return find_json(text, what="the model's reply")


def _fold(text: str) -> str:
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", text).casefold())


def _count_mentions(folded_content: str, key: str) -> int:
    if not key:
        return 0
    return len(re.findall(r"(?<!\w)" + re.escape(key) + r"(?!\w)", folded_content))


def _relation_type(value: Any) -> str:
    text = value if isinstance(value, str) else ""
    text = _NON_WORD.sub("_", unicodedata.normalize("NFKC", text)).strip("_").upper()
    return text or "RELATED_TO"


def _type_name(value: Any) -> str:
    """Entity and relation types are UPPER_SNAKE_CASE: ``works for`` -> ``WORKS_FOR``."""
    text = value if isinstance(value, str) else ""
    return _NON_WORD.sub("_", unicodedata.normalize("NFKC", text)).strip("_").upper()


class ExtractionSchema:
    """The entity and relation types a user declares, each with an optional description
    (shown to the model). Read from ``--entity-types A,B`` / ``--relation-types X,Y`` or a JSON
    file ``{"entity_types": [...] | {name: description}, "relation_types": ...}``."""

    def __init__(
        self, entity_types: Mapping[str, str] | Sequence[str] = (), relation_types: Mapping[str, str] | Sequence[str] = ()
    ) -> None:
        self.entity_types = self._names("entity_types", entity_types)
        self.relation_types = self._names("relation_types", relation_types)

    @staticmethod
    def _names(label: str, value: Any) -> dict[str, str]:
        if isinstance(value, str):
            value = [v for v in value.split(",")]
        if isinstance(value, Mapping):
            items = [(k, v) for k, v in value.items()]
        elif isinstance(value, (list, tuple)):
            items = [(k, "") for k in value]
        else:
            raise ConfigurationError(f"{label} must be a list of names or a map of name to description")
        out: dict[str, str] = {}
        for raw, description in items:
            name = _type_name(raw)
            if not name:
                if isinstance(raw, str) and not raw.strip():
                    continue
                raise ConfigurationError(f"{label}: {raw!r} is not a type name")
            if not isinstance(description, str):
                raise ConfigurationError(f"{label}: the description of {name} must be text")
            out[name] = description.strip()
        return out

    @classmethod
    def from_file(cls, path: str) -> ExtractionSchema:
        try:
            with open(path, encoding="utf-8") as handle:
                data = json.load(handle)
        except OSError as exc:
            raise ConfigurationError(f"cannot read the schema file {path}: {exc.strerror or exc}") from None
        except ValueError as exc:
            raise ConfigurationError(f"the schema file {path} is not JSON: {exc}") from None
        if not isinstance(data, dict) or not set(data) <= {"entity_types", "relation_types"} or not data:
            raise ConfigurationError(f"the schema file {path} must be a JSON object with entity_types and/or relation_types")
        return cls(data.get("entity_types", ()), data.get("relation_types", ()))

    def merged(self, other: ExtractionSchema) -> ExtractionSchema:
        return ExtractionSchema({**self.entity_types, **other.entity_types}, {**self.relation_types, **other.relation_types})

    def __bool__(self) -> bool:
        return bool(self.entity_types or self.relation_types)

    def as_dict(self) -> dict[str, dict[str, str]]:
        return {"entity_types": dict(self.entity_types), "relation_types": dict(self.relation_types)}


_SYSTEM_PROMPT = """\
You extract a knowledge graph from text.
Answer with JSON only, exactly of this form:
{{"entities": [{{"name": "...", "type": "...", "description": "...", "chunk_ids": ["..."]}}],
 "relationships": [{{"source": "...", "target": "...", "type": "...", "strength": 0.0,
                    "description": "..."}}]}}
Rules:
- name: the entity as written in the text (people, organizations, places, events, concepts).
- type: {type_rule}
- description: one sentence about the entity, from the text only.
- chunk_ids: the ids of the chunks (the [chunk_id: ...] headers) that mention the entity.
- relationships only between entity names you listed (or the known entities given);
  type: {relation_rule};
  strength is a number from 0 (weak) to 1 (strong).
- never relate an entity to itself; do not invent facts that are not in the text."""

_JSON_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "entities": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "type": {"type": "string"},
                    "description": {"type": "string"},
                    "chunk_ids": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["name", "type", "description", "chunk_ids"],
            },
        },
        "relationships": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "source": {"type": "string"},
                    "target": {"type": "string"},
                    "type": {"type": "string"},
                    "strength": {"type": "number"},
                    "description": {"type": "string"},
                },
                "required": ["source", "target", "type", "strength"],
            },
        },
    },
    "required": ["entities", "relationships"],
}


class LLMEntityExtractor:
    """Extract entities and relationships from chunks with a ``ChatProvider``.

    ``batch_size`` chunks go into one prompt; ``workers`` prompts run at once. Entity ids are
    ``entity_id(namespace, name, type)``, so a name found in several batches, chunks or
    documents merges into one entity. ``known_entities`` (passed to ``extract``) are entities
    already in the graph that relationships may point to.
    """

    def __init__(
        self,
        chat: ChatProvider,
        *,
        batch_size: int = 5,
        workers: int = 3,
        logger: logging.Logger | None = None,
        namespace: str = "default",
        entity_types: Sequence[str] | Mapping[str, str] = DEFAULT_ENTITY_TYPES,
        relation_types: Sequence[str] | Mapping[str, str] = (),
        strict_types: bool = False,
        max_known_in_prompt: int = 50,
    ) -> None:
        if not callable(getattr(chat, "chat", None)):
            raise ConfigurationError("LLMEntityExtractor needs a ChatProvider (an object with .chat())")
        check_int(batch_size, "batch_size", minimum=1)
        check_int(workers, "workers", minimum=1)
        self.chat = chat
        self.batch_size = batch_size
        self.workers = workers
        self.namespace = namespace
        schema = ExtractionSchema(entity_types, relation_types)
        if strict_types and not schema:
            raise ConfigurationError("strict_types needs entity_types or relation_types to keep to")
        self.entity_types = tuple(schema.entity_types)
        self.relation_types = tuple(schema.relation_types)
        self._descriptions = {**schema.entity_types, **schema.relation_types}
        self.strict_types = strict_types
        # stored types go through the model's aliases (COMPANY is stored as ORGANIZATION)
        self._canonical_types = {normalise_type(t) for t in self.entity_types}
        self.max_known_in_prompt = max_known_in_prompt
        self.logger = logger or logging.getLogger(__name__)
        #: the chunks of the last ``extract`` whose batch failed (a build does not mark them read)
        self.failed_chunk_ids: frozenset[str] = frozenset()

    @property
    def extraction_key(self) -> str:
        """Names what this extractor reads a chunk into: the chat model (its class and
        ``model``, when it has one) and the schema. A build marks the chunks it sent with it
        and a later build with the same key sends only chunks not marked yet."""
        parts = [
            type(self.chat).__module__ + "." + type(self.chat).__qualname__,
            str(getattr(self.chat, "model", "")),
            ",".join(f"{t}={self._descriptions.get(t, '')}" for t in self.entity_types),
            ",".join(f"{t}={self._descriptions.get(t, '')}" for t in self.relation_types),
            str(self.strict_types),
        ]
        return "llm:" + hashlib.blake2b("\n".join(parts).encode(), digest_size=8).hexdigest()

    def extract(self, chunks: Iterable[TextUnit], *, known_entities: Iterable[Entity] = ()) -> ExtractionResult:
        """Entities, relations and mentions of ``chunks``, duplicates merged."""
        units = [c for c in chunks if (getattr(c, "content", "") or "").strip()]
        known: dict[str, Entity] = {}
        for e in known_entities:
            known.setdefault(normalise_name(e.name), e)
        batches = [units[i : i + self.batch_size] for i in range(0, len(units), self.batch_size)]
        if not batches:
            return ExtractionResult()
        if self.workers == 1 or len(batches) == 1:
            runs = [self._try_batch(b, known) for b in batches]
        else:
            with ThreadPoolExecutor(max_workers=min(self.workers, len(batches)), thread_name_prefix="kgrag-entities") as pool:
                runs = list(pool.map(lambda b: self._try_batch(b, known), batches))
        errors = [error for _, error in runs if error is not None]
        self.failed_chunk_ids = frozenset(c.id for b, (_, error) in zip(batches, runs) if error is not None for c in b)
        if len(errors) == len(batches):
            first = errors[0]
            many = f"all {len(batches)} batches" if len(batches) > 1 else "the only batch"
            error = type(first)(f"entity extraction failed for {many} of chunks; the first: {first}")
            error.retryable = first.retryable
            raise error from first
        return merge_results([part for part, _ in runs])

    # -- one batch --------------------------------------------------------------------------

    def messages(self, batch: Sequence[TextUnit], known: Mapping[str, Entity] | None = None) -> list[dict[str, str]]:
        """The prompt for one batch (public so callers can inspect or log it)."""
        system = _SYSTEM_PROMPT.format(
            type_rule=self._rule(self.entity_types, "entity"), relation_rule=self._rule(self.relation_types, "relation")
        )
        parts = [f"[chunk_id: {c.id}]\n{c.content.strip()}" for c in batch]
        user = "Chunks:\n\n" + "\n\n".join(parts)
        if known:
            names = sorted(e.name for e in known.values())[: self.max_known_in_prompt]
            user += "\n\nKnown entities you may relate to: " + "; ".join(names)
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def _rule(self, names: Sequence[str], kind: str) -> str:
        listed = ", ".join(f"{n} ({self._descriptions[n]})" if self._descriptions.get(n) else n for n in names)
        if not names:
            return "a short UPPER_SNAKE_CASE label (ALLY, WORKS_FOR, LOCATED_IN, ...)"
        if self.strict_types:
            return f"exactly one of {listed}; leave out any {kind} that fits none of them"
        return f"one of {listed}, or a more specific UPPER_SNAKE_CASE type"

    def _schema(self) -> Mapping[str, Any]:
        """The JSON schema sent with the prompt: with strict types, the types are enums."""
        if not self.strict_types:
            return _JSON_SCHEMA
        schema = json.loads(json.dumps(_JSON_SCHEMA))
        if self.entity_types:
            schema["properties"]["entities"]["items"]["properties"]["type"]["enum"] = list(self.entity_types)
        if self.relation_types:
            schema["properties"]["relationships"]["items"]["properties"]["type"]["enum"] = list(self.relation_types)
        return schema

    def _run_batch(self, batch: Sequence[TextUnit], known: Mapping[str, Entity]) -> ExtractionResult:
        return self._try_batch(batch, known)[0]

    def _try_batch(self, batch: Sequence[TextUnit], known: Mapping[str, Entity]) -> tuple[ExtractionResult, KgragError | None]:
        """One batch's result, and the error that made it a ``failed_batch`` (or None)."""
        ids = [c.id for c in batch]
        try:
            # Any failure of the provider call, whatever its type, costs one batch only.
            try:
                reply = self.chat.chat(self.messages(batch, known), json_schema=self._schema())
            except KgragError:
                raise
            except Exception as exc:  # noqa: BLE001 - third-party provider code
                raise ProviderResponseError(f"chat call failed: {exc!r}") from exc
            return self.validate(parse_json_reply(reply), batch, known), None
        except KgragError as exc:
            self.logger.warning("entity extraction batch %s skipped: %s", ids, exc)
            return ExtractionResult(dropped={"failed_batch": 1}), exc

    def validate(self, data: Any, batch: Sequence[TextUnit], known: Mapping[str, Entity] | None = None) -> ExtractionResult:
        """Apply the validation rules (module docstring) to one parsed reply. ``known`` maps
        normalised names to entities relationships may point to."""
        known = known or {}
        dropped: dict[str, int] = {}

        def drop(reason: str, n: int = 1) -> None:
            dropped[reason] = dropped.get(reason, 0) + n

        from ..replies import EntitiesReply, validate_reply  # Why here: pydantic is slow to import

        reply = validate_reply(data, EntitiesReply, what="the entity reply")
        raw_entities, raw_relations = reply.entities, reply.relationships

        order = {c.id: i for i, c in enumerate(batch)}
        folded = {c.id: _fold(c.content) for c in batch}
        by_key: dict[str, Entity] = {}
        entities: list[Entity] = []
        mentions: list[EntityMention] = []

        for item in raw_entities:
            if item is None:
                drop("malformed")
                continue
            name = _SPACES.sub(" ", item.name).strip()
            key = normalise_name(name)
            if not key:
                drop("empty_name")
                continue
            if len(name) > MAX_ENTITY_NAME_CHARS:
                drop("long_name")
                continue
            chunk_ids: list[str] = []
            for cid in item.chunk_ids:
                if isinstance(cid, str) and cid in order:
                    if cid not in chunk_ids:
                        chunk_ids.append(cid)
                else:
                    drop("unknown_chunk")
            if not chunk_ids:
                chunk_ids = [cid for cid in order if _count_mentions(folded[cid], key) > 0]
            if not chunk_ids:
                drop("ungrounded")
                continue
            chunk_ids.sort(key=order.__getitem__)
            if self.strict_types and self.entity_types and normalise_type(item.type) not in self._canonical_types:
                drop("unknown_entity_type")
                continue
            entity = Entity.create(
                name,
                item.type,
                namespace=self.namespace,
                description=item.description.strip(),
                source_chunk_id=chunk_ids[0],
            )
            by_key.setdefault(key, entity)
            entities.append(entity)
            for cid in chunk_ids:
                # The model says the chunk mentions it even if the spelling differs: at least 1.
                count = max(1, _count_mentions(folded[cid], key))
                mentions.append(EntityMention(cid, entity.id, count))

        relations: list[EntityRelation] = []
        for relation in raw_relations:
            if relation is None:
                drop("malformed")
                continue
            relation_type = _relation_type(relation.type)
            if self.strict_types and self.relation_types and relation_type not in self.relation_types:
                drop("unknown_relation_type")
                continue
            src_e = self._resolve(relation.source, by_key, known)
            dst_e = self._resolve(relation.target, by_key, known)
            if src_e is None or dst_e is None:
                drop("unknown_endpoint")
                continue
            if src_e.id == dst_e.id:
                drop("self_relation")
                continue
            strength = 1.0 if relation.strength is None else finite_unit(relation.strength)
            if strength is None:
                drop("bad_strength")
                continue
            relations.append(
                EntityRelation(
                    source_id=src_e.id,
                    target_id=dst_e.id,
                    type=relation_type,
                    weight=strength,
                    description=relation.description.strip(),
                )
            )

        # merge_results folds duplicates inside the batch by the same rules as across batches.
        return merge_results(
            [
                ExtractionResult(
                    entities=tuple(entities),
                    relations=tuple(relations),
                    mentions=tuple(mentions),
                    dropped=dropped,
                )
            ]
        )

    @staticmethod
    def _resolve(name: Any, by_key: Mapping[str, Entity], known: Mapping[str, Entity]) -> Entity | None:
        if not isinstance(name, str):
            return None
        key = normalise_name(name)
        if not key:
            return None
        return by_key.get(key) or known.get(key)
