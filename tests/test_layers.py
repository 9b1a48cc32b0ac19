"""The dependency direction of DESIGN.md, held by a scan of every import in the package.

``store/`` is an adapter: it imports core modules (types, value types, protocols, errors,
validation, settings, the Cypher registry) and the driver, nothing of the pipelines.
``retrieval/`` sees protocols, never a provider or the store. Only ``store/`` imports the
neo4j driver; only ``providers/`` imports a vendor SDK. Every import counts, also one inside a
function (a lazy import is still a dependency).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "kgrag_neo4j"

DOMAIN = ("retrieval", "ingestion", "entities", "communities", "triples", "providers", "cli", "integrations")
VENDOR_SDKS = ("cohere", "openai", "anthropic", "wordllama", "sentence_transformers")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Absolute names of the modules ``path`` imports (``from x import y`` gives ``x`` and
    ``x.y``: y may be a submodule)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = _module_name(path)
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            out.add(stem)
            out.update(f"{stem}.{alias.name}" for alias in node.names)
    return out


def _graph() -> dict[str, set[str]]:
    return {
        str(path.relative_to(PACKAGE)): _imports(path)
        for path in sorted(PACKAGE.rglob("*.py"))
        if "__pycache__" not in path.parts
    }


def _under(name: str, *prefixes: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _breaks(rule: callable) -> list[str]:
    found = []
    for file, names in _graph().items():
        for name in sorted(names):
            if rule(file, name):
                found.append(f"{file} imports {name}")
    return found


def test_the_scan_sees_imports():
    """The scanner resolves relative imports, also lazy ones inside functions."""
    graph = _graph()
    assert "kgrag_neo4j.store.runner" in graph["store/neo4j_store.py"]
    assert "kgrag_neo4j.cypher_registry" in graph["store/admin.py"]
    assert "kgrag_neo4j.store.admin" in graph["server.py"]  # imported inside a function
    assert "neo4j" in graph["store/runner.py"]


def test_store_imports_no_domain_package():
    domain = tuple(f"kgrag_neo4j.{p}" for p in DOMAIN)
    assert _breaks(lambda file, name: file.startswith("store/") and _under(name, *domain)) == []


@pytest.mark.parametrize("core", ["types/", "protocols.py", "provider_protocols.py", "errors.py", "validation.py"])
def test_core_imports_no_layer_above_it(core):
    above = tuple(f"kgrag_neo4j.{p}" for p in DOMAIN + ("store",))
    assert _breaks(lambda file, name: file.startswith(core) and _under(name, *above)) == []


def test_retrieval_and_ingestion_import_no_provider_and_no_store():
    banned = ("kgrag_neo4j.providers", "kgrag_neo4j.store")
    assert _breaks(lambda file, name: file.startswith(("retrieval/", "ingestion/")) and _under(name, *banned)) == []


@pytest.mark.parametrize("domain", ["entities/", "communities/", "triples/"])
def test_domain_packages_import_no_store(domain):
    assert _breaks(lambda file, name: file.startswith(domain) and _under(name, "kgrag_neo4j.store")) == []


def test_only_store_imports_the_driver():
    assert _breaks(lambda file, name: not file.startswith("store/") and _under(name, "neo4j")) == []


def test_only_providers_import_vendor_sdks():
    assert _breaks(lambda file, name: not file.startswith("providers/") and _under(name, *VENDOR_SDKS)) == []


def test_a_break_is_reported(monkeypatch):
    """The rules can fail: a store module importing retrieval is caught."""
    graph = _graph()
    graph["store/graph.py"] = graph["store/graph.py"] | {"kgrag_neo4j.retrieval.scoring"}
    monkeypatch.setattr(__import__(__name__, fromlist=["_graph"]), "_graph", lambda: graph)
    domain = tuple(f"kgrag_neo4j.{p}" for p in DOMAIN)
    assert _breaks(lambda file, name: file.startswith("store/") and _under(name, *domain)) == [
        "store/graph.py imports kgrag_neo4j.retrieval.scoring"
    ]


def test_store_documents_and_graph_do_not_import_each_other():
    graph = _graph()
    assert not {n for n in graph["store/documents.py"] if _under(n, "kgrag_neo4j.store.graph")}
    assert not {n for n in graph["store/graph.py"] if _under(n, "kgrag_neo4j.store.documents")}


def _store_probes(path: Path) -> list[str]:
    """``getattr(store, ...)`` / ``hasattr(self.store, ...)`` calls: duck typing of the store
    where a protocol's ``isinstance`` check belongs."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr"):
            target = ast.unparse(node.args[0]) if node.args else ""
            if target in ("store", "self.store") or target.startswith(("getattr(store", "getattr(self.store")):
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {ast.unparse(node)}")
    return found


def test_pipelines_find_store_capabilities_by_protocol_not_by_probing():
    pipelines = ("retrieval", "ingestion", "entities", "communities", "triples")
    found = [p for d in pipelines for f in sorted((PACKAGE / d).rglob("*.py")) for p in _store_probes(f)]
    assert found == []


def _module_graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports. ``from pkg import name`` also runs ``pkg``'s
    ``__init__``, but an import of a package's ``__init__`` is left out: what counts is which
    module's code depends on which."""
    graph = _graph()
    names = {f: "kgrag_neo4j." + f[: -len(".py")].replace("/", ".").removesuffix(".__init__") for f in graph}
    modules = {n for f, n in names.items() if not f.endswith("__init__.py")}
    return {
        names[f]: {i for i in imports if i in modules and i != names[f]}
        for f, imports in graph.items()
        if not f.endswith("__init__.py")
    }


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles of ``graph``: its strongly connected components of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


#: cycles still to break
KNOWN_CYCLES: list[list[str]] = []


def test_no_import_cycle_between_modules():
    """Two modules that import each other (even lazily, or for types only) cannot be understood or
    changed apart: the shared types go to a module both import."""
    assert [c for c in _cycles(_module_graph()) if c not in KNOWN_CYCLES] == []


def test_a_cycle_is_reported():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def _reexported_imports(folder: str) -> list[str]:
    """``from module import Name`` in ``folder`` where ``Name`` is defined in another module: an
    import through a re-export. A package's ``__init__`` (``from ..store import Neo4jStore``) is
    a public home and allowed."""
    import importlib

    found = []
    for path in sorted((PACKAGE / folder).rglob("*.py")):
        package = _module_name(path)
        if path.name != "__init__.py":
            package = package.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.ImportFrom) and node.level and node.module):
                continue
            base = package.split(".")
            module_name = ".".join(base[: len(base) - (node.level - 1)] + [node.module])
            module = importlib.import_module(module_name)
            if module.__file__ and module.__file__.endswith("__init__.py"):
                continue
            for alias in node.names:
                home = getattr(getattr(module, alias.name, None), "__module__", module_name)
                if isinstance(home, str) and home.startswith("kgrag_neo4j") and home != module_name:
                    found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {alias.name} from {module_name} (defined in {home})")
    return found


def test_the_cli_imports_names_from_their_homes():
    """The CLI is the first code a newcomer reads: it imports each name from the module that
    defines it, never through a module that re-exports it for older imports."""
    assert _reexported_imports("cli") == []
