"""The ``:params {...}`` lines of Neo4j Browser: read from a Cypher file's ``browser:`` header,
filled in for a statement (namespace, query vector, escaped full-text query, filters), and
printed back ready to paste (``kgrag cypher params``, ``kgrag cypher run --query``).

The map syntax is what Browser's ``:params`` reads: ``{key: value, ...}`` with unquoted (or
quoted) keys, ``'...'`` or ``"..."`` strings, numbers, ``true``/``false``/``null``, lists and
maps. Browser parses that map in JavaScript, so **every number reaches the server as a
FLOAT**; ``parse_params(text, browser_numbers=True)`` reads a line the way Browser does, and
the Cypher files accept a FLOAT wherever they take an INTEGER (``toInteger``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .cypher_registry import CypherQuery
from .errors import ConfigurationError, InputError

__all__ = [
    "EMBEDDING_PARAM",
    "FILTER_PARAM",
    "StatementParams",
    "browser_defaults",
    "format_params",
    "fulltext_params",
    "parse_params",
    "resolve_params",
    "statement_params",
    "takes_embedding",
    "to_literal",
]

#: the query vector every vector-searching statement takes
EMBEDDING_PARAM = "embedding"
#: a vector statement's slot parameters: where the namespace's model keeps its vectors
SLOT_PARAMS = ("vector_property", "chunk_index", "entity_index")
#: the one map of chunk filters (kgrag_neo4j.types.filters_to_param)
FILTER_PARAM = "filter"
#: the word runs of the query that could name an entity (entities.gazetteer.query_name_keys)
ENTITY_KEYS_PARAM = "entity_keys"
_NO_PARAMS = ("(no parameters)", "none", "-", "")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "\\": "\\", "'": "'", '"': '"', "/": "/"}


# --- reading --------------------------------------------------------------------------


def parse_params(text: str, *, browser_numbers: bool = False) -> dict[str, Any]:
    """The map of a ``:params {...}`` line (the ``:params`` prefix is optional).

    ``browser_numbers``: read every number as a float, as Neo4j Browser sends it.
    """
    source = text.strip()
    if source.startswith(":params"):
        source = source[len(":params") :].strip()
    parser = _Parser(source, browser_numbers)
    value = parser.value()
    parser.skip_space()
    if parser.pos != len(source):
        raise InputError(f"unexpected text after the map at character {parser.pos + 1}: {source[parser.pos :][:30]!r}")
    if not isinstance(value, dict):
        raise InputError("a :params line holds one map: {key: value, ...}")
    return value


class _Parser:
    def __init__(self, text: str, browser_numbers: bool):
        self.text = text
        self.pos = 0
        self.browser_numbers = browser_numbers

    def fail(self, what: str) -> InputError:
        return InputError(f"{what} at character {self.pos + 1} of {self.text[:60]!r}")

    def skip_space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self) -> str:
        self.skip_space()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def expect(self, ch: str) -> None:
        if self.peek() != ch:
            raise self.fail(f"expected {ch!r}")
        self.pos += 1

    def value(self) -> Any:
        ch = self.peek()
        if ch == "{":
            return self.map()
        if ch == "[":
            return self.list()
        if ch in ("'", '"'):
            return self.string()
        m = _NUMBER.match(self.text, self.pos)
        if m:
            self.pos = m.end()
            literal = m.group(0)
            if self.browser_numbers or any(c in literal for c in ".eE"):
                return float(literal)
            return int(literal)
        m = _IDENT.match(self.text, self.pos)
        if m and m.group(0).lower() in ("true", "false", "null"):
            self.pos = m.end()
            return {"true": True, "false": False, "null": None}[m.group(0).lower()]
        raise self.fail("expected a value (string, number, true, false, null, list or map)")

    def string(self) -> str:
        quote = self.text[self.pos]
        self.pos += 1
        out: list[str] = []
        while self.pos < len(self.text):
            ch = self.text[self.pos]
            if ch == quote:
                self.pos += 1
                return "".join(out)
            if ch == "\\":
                nxt = self.text[self.pos + 1 : self.pos + 2]
                if nxt == "u":
                    digits = self.text[self.pos + 2 : self.pos + 6]
                    if not re.fullmatch(r"[0-9a-fA-F]{4}", digits):
                        raise self.fail("bad \\u escape")
                    out.append(chr(int(digits, 16)))
                    self.pos += 6
                    continue
                if nxt not in _ESCAPES:
                    raise self.fail(f"unknown escape \\{nxt}")
                out.append(_ESCAPES[nxt])
                self.pos += 2
                continue
            out.append(ch)
            self.pos += 1
        raise self.fail("unterminated string")

    def list(self) -> list[Any]:
        self.expect("[")
        items: list[Any] = []
        if self.peek() == "]":
            self.pos += 1
            return items
        while True:
            items.append(self.value())
            if self.peek() == ",":
                self.pos += 1
                continue
            self.expect("]")
            return items

    def map(self) -> dict[str, Any]:
        self.expect("{")
        out: dict[str, Any] = {}
        if self.peek() == "}":
            self.pos += 1
            return out
        while True:
            ch = self.peek()
            if ch in ("'", '"'):
                key = self.string()
            else:
                m = _IDENT.match(self.text, self.pos)
                if not m:
                    raise self.fail("expected a key")
                key = m.group(0)
                self.pos = m.end()
            if key in out:
                raise self.fail(f"key {key!r} given twice")
            self.expect(":")
            out[key] = self.value()
            if self.peek() == ",":
                self.pos += 1
                continue
            self.expect("}")
            return out


# --- writing --------------------------------------------------------------------------


def to_literal(value: Any) -> str:
    """One value in the ``:params`` syntax (also a Cypher literal)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InputError(f"{value!r} has no :params form (not a finite number)")
        text = repr(value)
        return text if any(c in text for c in ".eE") else text + ".0"
    if isinstance(value, str):
        escaped = value.replace("\\", "\\\\").replace("'", "\\'")
        escaped = escaped.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
        return f"'{escaped}'"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_key(k)}: {to_literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(to_literal(v) for v in value) + "]"
    raise InputError(f"a {type(value).__name__} has no :params form")


def _key(key: Any) -> str:
    if not isinstance(key, str):
        raise InputError(f"map keys are text, got {key!r}")
    return key if _IDENT.fullmatch(key) else to_literal(key)


def format_params(values: Mapping[str, Any]) -> str:
    """``:params {...}`` on one line, keys in the given order."""
    return ":params " + to_literal(dict(values))


# --- one statement's parameters -------------------------------------------------------


def browser_defaults(query: CypherQuery) -> dict[str, Any]:
    """The file's ``browser:`` example as values (integers stay integers), {} when it has none."""
    line = query.browser.strip()
    if line.lower() in _NO_PARAMS:
        return {}
    if not line.startswith(":params"):
        raise InputError(f"{query.path}: the browser: line is not a :params {{...}} line: {line[:40]!r}")
    return parse_params(line)


def fulltext_params(query: CypherQuery) -> list[str]:
    """Parameters that take an escaped full-text (Lucene) query: STRING parameters whose
    declared meaning says so (``escaped Lucene query``, ``escaped full-text query``)."""
    return [
        p.name
        for p in query.params
        if p.type.upper() == "STRING" and re.search(r"\bescaped\b.*\b(lucene|full-text)\b", p.meaning, re.I)
    ]


def takes_embedding(query: CypherQuery) -> bool:
    return EMBEDDING_PARAM in query.param_names


@dataclass(frozen=True)
class StatementParams:
    """What ``statement_params`` decided: the values, and which of them came from the file."""

    values: dict[str, Any]
    from_file: tuple[str, ...]

    @property
    def line(self) -> str:
        return format_params(self.values)


def statement_params(
    query: CypherQuery,
    *,
    namespace: str | None = None,
    query_text: str | None = None,
    params: Mapping[str, Any] | None = None,
    filter_param: Mapping[str, Any] | None = None,
    embed: Callable[[str], Sequence[float]] | None = None,
) -> StatementParams:
    """The parameters for one statement: the file's example, then ``namespace``, the query
    (``embed(query_text)`` for ``$embedding``, for full-text parameters the escaped text as the
    namespace's Lucene query, ``keyword_lucene_query``, for ``$entity_keys`` the query's word
    runs as the retrievers compute them),
    ``filter_param`` for ``$filter``, then ``params`` (explicit values win).

    Refuses what the statement cannot take: an unknown parameter name, a namespace for a
    statement without one, a query for a statement with neither a vector nor a full-text query.
    """
    declared = [p.name for p in query.params]
    defaults = browser_defaults(query)
    given = dict(params or {})
    unknown = sorted(set(given) - set(declared))
    if unknown:
        raise InputError(f"{query.name} has no parameter {', '.join(unknown)}; it takes: {', '.join(declared) or 'none'}")
    values: dict[str, Any] = {}
    if namespace is not None:
        if "namespace" not in declared:
            raise InputError(f"{query.name} takes no namespace (it is not scoped to one)")
        values["namespace"] = namespace
    if filter_param is not None:
        if FILTER_PARAM not in declared:
            raise InputError(f"{query.name} takes no filters")
        values[FILTER_PARAM] = dict(filter_param)
    if query_text is not None:
        keyword = fulltext_params(query)
        if not takes_embedding(query) and not keyword:
            raise InputError(f"{query.name} takes no query (no $embedding and no full-text query parameter)")
        if takes_embedding(query) and EMBEDDING_PARAM not in given:
            if embed is None:
                raise ConfigurationError("an embedder is needed for the query vector")
            # 8 significant digits: vectors are stored as float32 (~7 digits), so nothing is lost
            values[EMBEDDING_PARAM] = [float(f"{float(x):.8g}") for x in embed(query_text)]
        if ENTITY_KEYS_PARAM in declared and ENTITY_KEYS_PARAM not in given:
            # the names the query could be naming, found as the retrievers find them
            from .entities.gazetteer import query_name_keys
            from .store._rows import entity_key_rows

            values[ENTITY_KEYS_PARAM] = entity_key_rows(query_name_keys(query_text))
        from .store.chunks import escape_lucene_query, keyword_lucene_query

        # the full-text query names its namespace, as the library sends it (namespace-exact)
        target = values.get("namespace") or given.get("namespace") or defaults.get("namespace")
        for name in keyword:
            values[name] = keyword_lucene_query(
                escape_lucene_query(query_text), target if isinstance(target, str) and target else None
            )
    values.update(given)
    from_file = tuple(name for name in declared if name not in values and name in defaults)
    missing = [name for name in declared if name not in values and name not in defaults]
    if missing:
        raise InputError(f"{query.name}: no value for {', '.join(missing)} (the file's :params line lacks it)")
    ordered = {name: values[name] if name in values else defaults[name] for name in declared}
    return StatementParams(values=ordered, from_file=from_file)


def resolve_params(
    query: CypherQuery,
    *,
    open_store: Callable[[str], Any] | None = None,
    namespace: str | None = None,
    query_text: str | None = None,
    params: Mapping[str, Any] | None = None,
    filters: Sequence[Any] = (),
    embedder: Any = None,
) -> StatementParams:
    """``statement_params`` with the query vector made by the embedder the statement's
    namespace recorded (or ``embedder``, checked against it), and ``filters`` (``ChunkFilter``
    values) as the ``$filter`` map. ``open_store(namespace)`` gives a store; it is called only
    when a query vector is needed."""
    from .types import filters_to_param

    embed = None
    given = dict(params or {})
    slot_names = [name for name in SLOT_PARAMS if name in query.param_names and name not in given]
    wants_vector = query_text is not None and takes_embedding(query) and EMBEDDING_PARAM not in given
    if slot_names and open_store is not None and (namespace is not None or "namespace" in given or wants_vector):
        # the namespace's vectors are in its model's slot: its property and index names
        target = namespace or given.get("namespace") or browser_defaults(query).get("namespace")
        slot = open_store(target if isinstance(target, str) and target else "default").vector_params()
        given.update({name: slot[name] for name in slot_names})
    if wants_vector:
        if open_store is None:
            raise ConfigurationError(f"{query.name} needs the database for the query vector's embedder")
        target = namespace or given.get("namespace") or browser_defaults(query).get("namespace")
        store = open_store(target if isinstance(target, str) and target else "default")
        if embedder is None:
            from .providers.select import embedder_for_model

            embedder = embedder_for_model(store.schema_status().model)
        store.check_embedder(embedder.name, embedder.dimensions)

        def embed(text: str) -> Sequence[float]:
            return embedder.embed([text], input_type="query")[0]

    return statement_params(
        query,
        namespace=namespace,
        query_text=query_text,
        params=given,
        filter_param=filters_to_param(filters) if filters else None,
        embed=embed,
    )
