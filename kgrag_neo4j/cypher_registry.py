"""Load the ``cypher/`` folder into an immutable registry of named statements.

Each ``cypher/<area>/<name>.cypher`` file holds one statement (``mode: schema`` files may hold
several, ``;``-terminated) under a ``//`` header::

    // mode: read
    // params:
    //   $namespace  STRING   tenant to search in
    //   $top_k      INTEGER  hits to return
    // returns: chunk_id STRING, score FLOAT
    // browser: :params {namespace: 'demo', top_k: 5}
    MATCH ...

The query name is ``<area>/<name>``. The ``browser:`` line is a Neo4j Browser ``:params`` line
for every parameter, runnable as pasted on the demo (``kgrag_neo4j.cypher_params`` reads it). The loader refuses a parameter used but not declared (or
declared but unused), a missing ``mode``, and a second statement; every error starts with
``path:line``. Python never builds Cypher text: it asks the registry for a statement by name
and passes values as parameters.

The server keys its plan cache on the sizes of list parameters too (1, up to 10, up to 100,
...), so a statement sent with lists of ever new sizes is planned again and again (a
maintenance write planned again costs ten times its work). What is sent (``CypherQuery.send``)
therefore reads every ``LIST`` parameter from one map, ``$kgrag_lists``: each statement is
planned once. The file's text, which Browser runs, is unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .errors import CypherRegistryError

__all__ = ["CypherQuery", "CypherRegistry", "cypher_dir", "load_registry"]

MODES = ("read", "write", "schema")
#: the map parameter the list parameters are sent in (see the module's docstring)
LISTS = "kgrag_lists"
_PARAM_DECL = re.compile(r"^\$([A-Za-z_][A-Za-z0-9_]*)\s+(\S+)\s*(.*)$")
_HEADER_KEY = re.compile(r"^([a-z_]+):\s*(.*)$")


@dataclass(frozen=True, slots=True)
class CypherParam:
    name: str
    type: str
    meaning: str


@dataclass(frozen=True, slots=True)
class CypherQuery:
    """One named statement. ``text`` is what is sent to the server; ``statements`` splits
    schema files into their parts."""

    name: str
    mode: str
    params: tuple[CypherParam, ...]
    returns: str
    browser: str
    text: str
    path: str
    line: int
    doc: str = ""
    sent: str = ""  # ``text`` reading the list parameters from ``$kgrag_lists``
    packed: tuple[str, ...] = ()  # the list parameters

    def send(self, params: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        """The text and parameters to send: the list parameters in one map, so that the
        server plans the statement once whatever their sizes."""
        if not self.packed:
            return self.text, dict(params)
        out = {k: v for k, v in params.items() if k not in self.packed}
        out[LISTS] = {k: params[k] for k in self.packed if k in params}
        return self.sent, out

    @property
    def param_names(self) -> frozenset[str]:
        return frozenset(p.name for p in self.params)

    @property
    def statements(self) -> tuple[str, ...]:
        if self.mode != "schema":
            return (self.text,)
        return tuple(s.strip() for s in _split_statements(self.text) if s.strip())

    def check_params(self, given: Mapping[str, object]) -> None:
        """Refuse a call whose parameters differ from the declared ones."""
        missing = self.param_names - given.keys()
        extra = given.keys() - self.param_names
        if missing or extra:
            parts = []
            if missing:
                parts.append("missing " + ", ".join(sorted(missing)))
            if extra:
                parts.append("unexpected " + ", ".join(sorted(extra)))
            raise CypherRegistryError(f"{self.path}:{self.line}: {self.name}: {'; '.join(parts)}")


class CypherRegistry(Mapping[str, CypherQuery]):
    """An immutable mapping of query name to ``CypherQuery``."""

    def __init__(self, queries: Mapping[str, CypherQuery], root: Path):
        self._queries = MappingProxyType(dict(queries))
        self.root = root

    def __getitem__(self, name: str) -> CypherQuery:
        try:
            return self._queries[name]
        except KeyError:
            raise CypherRegistryError(f"no cypher query named {name!r} in {self.root}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._queries))

    def __len__(self) -> int:
        return len(self._queries)


def cypher_dir() -> Path:
    """Where the ``.cypher`` files are: inside the installed wheel, else the source checkout."""
    packaged = resources.files("kgrag_neo4j") / "cypher"
    if packaged.is_dir():
        return Path(str(packaged))
    checkout = Path(__file__).resolve().parent.parent / "cypher"
    if checkout.is_dir():
        return checkout
    raise CypherRegistryError(f"cypher/ folder not found (looked in {packaged} and {checkout})")


@cache
def load_registry(root: str | None = None) -> CypherRegistry:
    """Load (once per root) every ``*.cypher`` file under ``root``."""
    base = Path(root) if root else cypher_dir()
    queries: dict[str, CypherQuery] = {}
    for path in sorted(base.rglob("*.cypher")):
        query = parse_file(path, base)
        if query.name in queries:  # cannot happen with distinct paths, kept as a guard
            raise CypherRegistryError(f"{path}:1: duplicate query name {query.name!r}")
        queries[query.name] = query
    return CypherRegistry(queries, base)


def parse_file(path: Path, base: Path) -> CypherQuery:
    name = path.relative_to(base).with_suffix("").as_posix()
    return parse_text(path.read_text(encoding="utf-8"), name=name, path=str(path))


def parse_text(source: str, *, name: str, path: str) -> CypherQuery:
    lines = source.splitlines()
    header: dict[str, str] = {}
    params: list[CypherParam] = []
    doc: list[str] = []
    key_lines: dict[str, int] = {}
    in_params = False
    body_start = len(lines)
    for i, raw in enumerate(lines):
        stripped = raw.strip()
        if not stripped.startswith("//"):
            if stripped == "":
                continue
            body_start = i
            break
        text = stripped[2:].strip()
        if in_params and text.startswith("$"):
            m = _PARAM_DECL.match(text)
            if not m:
                raise CypherRegistryError(f"{path}:{i + 1}: malformed parameter line {text!r}")
            params.append(CypherParam(m.group(1), m.group(2), m.group(3)))
            key_lines.setdefault("$" + m.group(1), i + 1)
            continue
        m = _HEADER_KEY.match(text)
        if m and m.group(1) in ("mode", "params", "returns", "browser"):
            key, value = m.group(1), m.group(2).strip()
            if key in header:
                raise CypherRegistryError(f"{path}:{i + 1}: header key {key!r} given twice")
            header[key] = value
            key_lines[key] = i + 1
            in_params = key == "params"
            continue
        in_params = False
        doc.append(text)
    mode = header.get("mode")
    if mode not in MODES:
        raise CypherRegistryError(f"{path}:1: header needs 'mode: read|write|schema' (got {mode!r})")
    for key in ("params", "returns", "browser"):
        if key not in header:
            raise CypherRegistryError(f"{path}:1: header is missing '{key}:'")
    if header["params"] and header["params"].lower() not in ("none", "-"):
        raise CypherRegistryError(f"{path}:{key_lines['params']}: list parameters on their own '//   $name TYPE meaning' lines")
    body = "\n".join(lines[body_start:]).strip()
    if not body:
        raise CypherRegistryError(f"{path}:{body_start + 1}: no statement after the header")
    statements = [s for s in _split_statements(body) if s.strip()]
    if mode != "schema" and len(statements) != 1:
        raise CypherRegistryError(f"{path}:{body_start + 1}: one statement per file (found {len(statements)})")
    text = statements[0].strip() if mode != "schema" else body.rstrip().rstrip(";")
    used = used_parameters(body)
    declared = {p.name for p in params}
    if len(declared) != len(params):
        raise CypherRegistryError(f"{path}:{key_lines['params']}: a parameter is declared twice")
    undeclared = used - declared
    if undeclared:
        line = _line_of(lines, "$" + sorted(undeclared)[0], body_start)
        raise CypherRegistryError(f"{path}:{line}: parameter(s) used but not declared: {', '.join(sorted(undeclared))}")
    if LISTS in declared:
        raise CypherRegistryError(f"{path}:{key_lines['$' + LISTS]}: ${LISTS} is the name the list parameters are sent under")
    unused = declared - used
    if unused:
        first = sorted(unused)[0]
        raise CypherRegistryError(
            f"{path}:{key_lines.get('$' + first, 1)}: parameter(s) declared but not used: {', '.join(sorted(unused))}"
        )
    return CypherQuery(
        name=name,
        mode=mode,
        params=tuple(params),
        returns=header["returns"],
        browser=header["browser"],
        text=text,
        path=path,
        line=body_start + 1,
        doc=" ".join(doc).strip(),
        sent=_pack_lists(text, packed) if (packed := _list_params(mode, params)) else text,
        packed=packed,
    )


def _list_params(mode: str, params: list[CypherParam]) -> tuple[str, ...]:
    if mode == "schema":
        return ()
    return tuple(sorted(p.name for p in params if p.type.upper().startswith("LIST")))


def _pack_lists(text: str, names: tuple[str, ...]) -> str:
    """``text`` with each use of a list parameter ``$name`` (outside strings and comments)
    read as ``$kgrag_lists.name``."""
    clean = _strip_literals(text)
    out, at = [], 0
    for m in _PARAM_USE.finditer(clean):
        if m.group(1) in names:
            out.append(text[at : m.start()])
            out.append(f"${LISTS}.{m.group(1)}")
            at = m.end()
    out.append(text[at:])
    return "".join(out)


def _line_of(lines: list[str], needle: str, start: int) -> int:
    for i in range(start, len(lines)):
        if needle in lines[i]:
            return i + 1
    return start + 1


#: a string (with backslash escapes), a backticked name or a comment, each possibly unclosed
_LITERAL = re.compile(
    r"""'(?:\\.|[^'\\])*(?:'|\\?\Z)|"(?:\\.|[^"\\])*(?:"|\\?\Z)|`[^`]*(?:`|\Z)|//[^\n]*|/\*.*?(?:\*/|\Z)""", re.S
)


def _strip_literals(text: str) -> str:
    """Blank out strings, backticked names and comments so ``$`` inside them is not a param
    (same length as ``text``: statement splitting maps positions back)."""
    return _LITERAL.sub(lambda m: " " * len(m.group()), text)


_PARAM_USE = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


def used_parameters(text: str) -> set[str]:
    return set(_PARAM_USE.findall(_strip_literals(text)))


def _split_statements(text: str) -> list[str]:
    """Split on ``;`` outside strings and comments."""
    clean = _strip_literals(text)
    parts, start = [], 0
    for i, ch in enumerate(clean):
        if ch == ";":
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts
