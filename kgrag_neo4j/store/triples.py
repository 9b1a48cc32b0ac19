"""Triple capability of Neo4jStore: the subject-predicate-object store on the entity graph.

A triple is ``(:Entity)-[:RELATED_TO {type: predicate, origin: 'triple'}]->(:Entity)``, so
triples, extracted entities and communities are one graph that Browser users can walk.

Entity rule: a subject or object becomes the ``(:Entity)`` whose id is
``entity_id(namespace, name, type)``; the type is ``metadata["subject_type"]`` /
``metadata["object_type"]`` when the triple carries one (normalised, e.g. ``"tool"`` ->
``TOOL``), else ``CONCEPT``. Names are compared by ``normalise_name`` (``name_key``): lookups by
name find every entity of that name, whatever its type, and the first spelling written is the
one stored and returned.

Reserved metadata keys (kept in the stored metadata as well): ``subject_type``,
``object_type``, ``weight`` (a number in (0, 1], default 1.0) and ``chunk_id`` (the chunk the
triple was read from: the chunk gets ``MENTIONS`` edges to both ends, which is how graph RAG
reaches the triples from vector hits).

Lookups never scan: subject and object lookups seek the ``entity_namespace_name`` index and
expand the node's relationships (SPO and OSP/POS indexes become adjacency), predicate
lookups seek the ``related_to_type`` relationship index.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..errors import ConfigurationError, InputError
from ..steps import Steps, twin_methods
from ..types.entities import entity_id, normalise_name, normalise_type
from ..types.triples import EXPANSION_PREDICATES, ConfidenceUpdate, ExpandedNode, PredicateRegistry, Triple, normalise_predicate
from ..validation import check_int, check_number
from .aio import AsyncDrivers, Read
from .runner import CypherRunner

__all__ = [
    "DEFAULT_CONFIDENCE",
    "DEFAULT_ENTITY_TYPE",
    "MAX_EXPANSION_DEPTH",
    "TRIPLE_ROWS",
    "TriplesMixin",
    "triple_rows",
]

#: the type of a subject or object whose triple names none
DEFAULT_ENTITY_TYPE = "CONCEPT"
#: triple rows per UNWIND statement (several statements still share one transaction)
TRIPLE_ROWS = 2000
#: edges removed per statement by clear_triples (keeps each transaction's state bounded)
CLEAR_BATCH = 10_000
#: hops unrolled in cypher/triples/expand.cypher
MAX_EXPANSION_DEPTH = 3
#: confidence of a learning that has none yet when a propagation first reaches it
DEFAULT_CONFIDENCE = 0.5

_DEFAULT_REGISTRY = PredicateRegistry()
_PREDICATE_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
_SPACES = re.compile(r"\s+")


def _weight(triple: Triple) -> float:
    raw = triple.metadata.get("weight")
    if raw is None or raw == "":
        return 1.0
    try:
        w = float(raw)
    except ValueError:
        w = math.nan
    if math.isnan(w) or not 0.0 < w <= 1.0:
        raise InputError(
            f"triple ({triple.subject!r} {triple.predicate} {triple.object!r}): "
            f"metadata weight must be a number in (0, 1], got {raw!r}"
        )
    return w


def triple_rows(namespace: str, triples: Iterable[Triple], registry: PredicateRegistry) -> list[dict[str, Any]]:
    """The ``$rows`` of ``cypher/triples/add_triples`` (pure; validates everything first).

    Raises ``InputError`` for a non-``Triple`` item, a predicate outside ``registry``, a name
    that normalises to nothing, a bad weight. Duplicates (same ends, predicate and chunk)
    collapse to one row (highest weight, last non-empty metadata); rows are sorted so that
    concurrent writers lock entities in the same order.
    """
    rows: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for i, t in enumerate(triples):
        if not isinstance(t, Triple):
            raise InputError(f"add_triples takes Triple values; item {i} is a {type(t).__name__}")
        try:
            predicate = registry.validate(t.predicate)
        except InputError as exc:
            raise InputError(f"triple {i} ({t.subject!r} {t.predicate} {t.object!r}): {exc}") from None
        meta = dict(t.metadata)
        subject_type = normalise_type(meta.get("subject_type") or DEFAULT_ENTITY_TYPE)
        object_type = normalise_type(meta.get("object_type") or DEFAULT_ENTITY_TYPE)
        row: dict[str, Any] = {
            "subject_id": entity_id(namespace, t.subject, subject_type),
            "subject": _SPACES.sub(" ", t.subject).strip(),
            "subject_key": normalise_name(t.subject),
            "subject_type": subject_type,
            "predicate": predicate,
            "object_id": entity_id(namespace, t.object, object_type),
            "object": _SPACES.sub(" ", t.object).strip(),
            "object_key": normalise_name(t.object),
            "object_type": object_type,
            "weight": _weight(t),
            "metadata": json.dumps(meta, sort_keys=True, ensure_ascii=False),
            "chunk_id": meta.get("chunk_id") or None,
        }
        key = (row["subject_id"], predicate, row["object_id"], row["chunk_id"] or "")
        old = rows.get(key)
        if old is not None:
            row["weight"] = max(row["weight"], old["weight"])
            if row["metadata"] == "{}":
                row["metadata"] = old["metadata"]
        rows[key] = row
    return [rows[k] for k in sorted(rows)]


def _check_limit(limit: Any, what: str = "limit") -> int:
    return check_int(limit, what, minimum=1, error=InputError)


def _name_key(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise InputError(f"{what} must be text, got {type(value).__name__}")
    key = normalise_name(value)
    if not key:
        raise InputError(f"{what} {value!r} is empty once normalised")
    return key


def _predicate_name(value: Any, registry: PredicateRegistry | None) -> str:
    if registry is not None:
        return registry.validate(value)
    name = normalise_predicate(value)
    if not _PREDICATE_NAME.match(name):
        raise InputError(f"predicate {value!r} is not a valid name (^[a-z][a-z0-9_]{{0,63}}$)")
    return name


def _triple_from_row(row: Mapping[str, Any]) -> Triple:
    try:
        meta = json.loads(row.get("metadata") or "{}")
    except ValueError:
        meta = {}
    return Triple(row["subject"], row["predicate"], row["object"], meta if isinstance(meta, dict) else {})


class TriplesMixin:
    runner: CypherRunner
    namespace: str
    aio: AsyncDrivers

    # -- write ----------------------------------------------------------------------------
    def add_triples(self, triples: Iterable[Triple], *, registry: PredicateRegistry | None = None) -> int:
        """Upsert triples in ONE transaction; return how many distinct triples were written.

        Every predicate must be in ``registry`` (default: the nine default predicates); otherwise nothing is
        written and ``InputError`` names the triple and the allowed predicates. Idempotent:
        adding the same triples again changes nothing but weight (highest kept) and metadata
        (latest non-empty kept). Usable as ``GraphBuffer(write_fn=store.add_triples)``.
        """
        rows = triple_rows(self.namespace, triples, _DEFAULT_REGISTRY if registry is None else registry)
        if not rows:
            return 0
        now = int(time.time())
        steps = [
            ("triples/add_triples", {"namespace": self.namespace, "rows": rows[i : i + TRIPLE_ROWS], "now": now})
            for i in range(0, len(rows), TRIPLE_ROWS)
        ]
        self.runner.write_tx(steps)
        return len({(r["subject_id"], r["predicate"], r["object_id"]) for r in rows})

    def clear_triples(self) -> dict[str, int]:
        """Remove the namespace's triple graph: every RELATED_TO and MENTIONS edge a triple
        wrote, then the entities left with neither. Documents, chunks, chunk edges and the
        entity extractor's entities, relations and mentions stay (a mention both wrote is
        kept, counted in ``kept_mentions``). Runs in batches (each its own transaction);
        returns ``{"edges", "mentions", "kept_mentions", "entities"}``."""
        total = {"edges": 0, "mentions": 0, "kept_mentions": 0, "entities": 0}
        while True:
            row = self.runner.write("triples/clear", namespace=self.namespace, batch_size=CLEAR_BATCH)[0]
            for k in total:
                total[k] += int(row[k])
            if not row["edges"] and not row["mentions"] and not row["kept_mentions"]:
                return total

    def propagate_confidence(self, tool: str, *, propagation_rate: float = 0.3) -> list[ConfidenceUpdate]:
        """Confidence propagation when ``tool`` succeeds after failures, in one statement.

        The errors the tool caused (``error -caused_by-> tool``) are its past failures; the
        errors ``similar_to`` them (either direction) are where the success teaches something;
        a *learning* is an entity such a similar error is ``resolved_by`` (the fix; its
        ``learned_from`` provenance edge is not needed here). Each learning reached gains ``0.1 * propagation_rate`` once per call (0.03 with
        the default 0.3), starting from ``DEFAULT_CONFIDENCE`` (0.5) when it has no
        ``confidence`` property yet, capped at 1.0. ``confidence`` is stored on the learning
        entity. Returns the updates, by name; none if the tool caused no error.
        """
        rate = check_number(propagation_rate, "propagation_rate", above=0.0, maximum=1.0)
        rows = self.runner.write(
            "triples/propagate_confidence",
            namespace=self.namespace,
            tool_key=_name_key(tool, "tool"),
            boost=0.1 * float(rate),
            initial=DEFAULT_CONFIDENCE,
        )
        return [
            ConfidenceUpdate(
                id=r["id"],
                name=r["name"],
                type=r["type"] or "",
                previous=float(r["previous"]),
                confidence=float(r["confidence"]),
            )
            for r in rows
        ]

    # -- read -----------------------------------------------------------------------------
    def query_triples(
        self,
        subject: str | None = None,
        predicate: str | None = None,
        object: str | None = None,  # noqa: A002 - the triple's name for the third term
        limit: int = 100,
        *,
        registry: PredicateRegistry | None = None,
    ) -> list[Triple]:
        """Triples matching every given term, in (subject, predicate, object) order.

        Any combination works: a subject anchors the lookup on the subject (SPO), else an
        object anchors it on the object (OSP / POS), else a predicate uses the relationship
        index, else the namespace's triples are listed. Names match by ``normalise_name``;
        the predicate is normalised (``Caused By`` -> ``caused_by``) and checked against
        ``registry`` when one is given (its syntax only otherwise).
        """
        name, params = self.lookup_statement(subject, predicate, object, limit, registry=registry)
        return [_triple_from_row(r) for r in self.runner.read(name, **params)]

    def lookup_statement(
        self,
        subject: str | None = None,
        predicate: str | None = None,
        object: str | None = None,  # noqa: A002
        limit: int = 100,
        *,
        registry: PredicateRegistry | None = None,
    ) -> tuple[str, dict[str, Any]]:
        """The named statement and parameters ``query_triples`` runs for these terms (to
        PROFILE or EXPLAIN a lookup direction; validation as ``query_triples``)."""
        _check_limit(limit)
        p = _predicate_name(predicate, registry) if predicate is not None else None
        s_key = _name_key(subject, "subject") if subject is not None else None
        o_key = _name_key(object, "object") if object is not None else None
        ns = self.namespace
        if s_key is not None:
            return "triples/query_by_subject", {
                "namespace": ns,
                "subject_key": s_key,
                "predicate": p,
                "object_key": o_key,
                "limit": limit,
            }
        if o_key is not None:
            return "triples/query_by_object", {"namespace": ns, "object_key": o_key, "predicate": p, "limit": limit}
        if p is not None:
            return "triples/query_by_predicate", {"namespace": ns, "predicate": p, "limit": limit}
        return "triples/query_all", {"namespace": ns, "limit": limit}

    def count_triples(self) -> int:
        return int(self.runner.read("triples/count", namespace=self.namespace)[0]["triples"])

    def predicate_stats(self) -> dict[str, int]:
        """Triples per predicate, most used first (predicate statistics)."""
        rows = self.runner.read("triples/predicate_stats", namespace=self.namespace)
        return {r["predicate"]: int(r["triples"]) for r in rows}

    def graph_stats(self) -> dict[str, dict[str, int]]:
        """``{"nodes": {label: n}, "edges": {type: n}}`` for the namespace (zeros included)."""
        out: dict[str, dict[str, int]] = {"nodes": {}, "edges": {}}
        for r in self.runner.read("triples/graph_stats", namespace=self.namespace):
            out["nodes" if r["kind"] == "node" else "edges"][r["name"]] = int(r["count"])
        return out

    def _expand_triples(
        self,
        start_names: Sequence[str],
        predicates: Sequence[str] = EXPANSION_PREDICATES,
        max_depth: int = 2,
        limit: int = 10,
        *,
        chunk_ids: Sequence[str] = (),
    ) -> Steps[list[ExpandedNode]]:
        """Breadth-first expansion over RELATED_TO edges of the given types, both directions,
        in ONE statement (``cypher/triples/expand``): from the entities named ``start_names``
        and from the entities the chunks ``chunk_ids`` mention. At most ``limit`` nodes, each
        at the first hop that reaches it; start entities are not returned. Any RELATED_TO of
        those types is followed, whether a triple or an extracted relation."""
        if isinstance(start_names, str) or isinstance(chunk_ids, str):
            raise InputError("start_names and chunk_ids are lists, not one string")
        check_int(max_depth, "max_depth", minimum=1, maximum=MAX_EXPANSION_DEPTH)
        _check_limit(limit)
        if isinstance(predicates, str) or not predicates or not all(isinstance(p, str) and p for p in predicates):
            raise ConfigurationError("predicates must be a non-empty list of relation types")
        starts = list(start_names)
        keys = [_name_key(n, "start name") for n in starts]
        chunks = [str(c) for c in chunk_ids]
        if not keys and not chunks:
            return []
        rows = yield from Read(
            self,
            "triples/expand",
            dict(
                namespace=self.namespace,
                start_keys=keys,
                chunk_ids=chunks,
                predicates=list(dict.fromkeys(predicates)),
                max_depth=max_depth,
                limit=limit,
            ),
        )
        out = []
        for r in rows:
            rank = int(r["rank"])
            seed = starts[rank] if rank < len(starts) else chunks[rank - len(starts)]
            out.append(
                ExpandedNode(
                    name=r["name"] or "",
                    predicate=r["predicate"],
                    from_name=r["from_name"] or "",
                    depth=int(r["depth"]),
                    type=r["type"] or "",
                    outgoing=bool(r["outgoing"]),
                    seed=seed,
                )
            )
        return out

    expand_triples, aexpand_triples = twin_methods(_expand_triples)
