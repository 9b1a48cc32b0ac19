"""The deliberate public surface: listed once (the lazy export table), mirrored for type
checkers, every exported name resolves, nothing heavy on import, and the wheel carries the
cypher/ files and ``py.typed``."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import kgrag_neo4j

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("name", [n for n in kgrag_neo4j.__all__ if n != "__version__"])
def test_every_exported_name_resolves(name):
    assert getattr(kgrag_neo4j, name) is not None


def test_version_is_the_installed_distributions_and_costs_no_import_until_asked():
    from importlib.metadata import version

    assert kgrag_neo4j.__version__ == version("kgrag-neo4j")
    # importlib.metadata (email, zipfile) was 0.1 s of every `kgrag` command
    code = "import sys, kgrag_neo4j.cli; print('importlib.metadata' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0 and done.stdout.split() == ["False"], done.stderr


def _type_checking_imports() -> dict[str, str]:
    """name -> module (relative to the package) of the ``if TYPE_CHECKING:`` block of
    kgrag_neo4j/__init__.py, read from its source."""
    tree = ast.parse((ROOT / "kgrag_neo4j" / "__init__.py").read_text())
    blocks = [n for n in tree.body if isinstance(n, ast.If) and isinstance(n.test, ast.Name) and n.test.id == "TYPE_CHECKING"]
    assert len(blocks) == 1, "one `if TYPE_CHECKING:` block at the top level"
    names: dict[str, str] = {}
    for node in blocks[0].body:
        assert isinstance(node, ast.ImportFrom) and node.level == 1, ast.unparse(node)
        for alias in node.names:
            assert alias.asname is None, ast.unparse(node)
            assert alias.name not in names, f"{alias.name} imported twice"
            names[alias.name] = node.module
    return names


def test_all_is_the_export_table_and_the_type_checking_block():
    exports = kgrag_neo4j._EXPORTS
    assert sorted(kgrag_neo4j.__all__) == sorted([*exports, "__version__"])
    assert len(kgrag_neo4j.__all__) == len(set(kgrag_neo4j.__all__))
    # the same names from the same modules: what a type checker sees is what __getattr__ returns
    assert _type_checking_imports() == exports


@pytest.mark.parametrize("name, module", sorted(kgrag_neo4j._EXPORTS.items()))
def test_every_export_is_the_object_its_module_defines(name, module):
    assert getattr(kgrag_neo4j, name) is getattr(importlib.import_module(f"kgrag_neo4j.{module}"), name)


def test_the_package_is_marked_typed():
    assert (ROOT / "kgrag_neo4j" / "py.typed").is_file()


def test_unknown_names_raise_attribute_error():
    with pytest.raises(AttributeError):
        kgrag_neo4j.NoSuchThing  # noqa: B018


def test_import_loads_no_vendor_sdk_or_model():
    code = (
        "import sys, kgrag_neo4j; kgrag_neo4j.Neo4jStore; kgrag_neo4j.GraphRetriever; kgrag_neo4j.Ingestor;"
        "print(sorted(m for m in ('cohere', 'wordllama', 'torch', 'sentence_transformers', 'openai', 'llama_index', 'mcp') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_retrieval_and_ingestion_do_not_import_the_driver():
    """DESIGN: only store/ talks to the database."""
    offenders = []
    for package in ("retrieval", "ingestion", "entities", "communities", "triples", "providers"):
        for path in (ROOT / "kgrag_neo4j" / package).rglob("*.py"):
            text = path.read_text()
            if "import neo4j" in text or "from neo4j" in text:
                offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


def test_wheel_ships_the_cypher_files(tmp_path):
    pytest.importorskip("build")
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
        text=True,
    )
    (wheel,) = tmp_path.glob("kgrag_neo4j-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {n.removeprefix("kgrag_neo4j/cypher/") for n in names if n.startswith("kgrag_neo4j/cypher/")}
    expected = {p.relative_to(ROOT / "cypher").as_posix() for p in (ROOT / "cypher").rglob("*.cypher")}
    assert expected and expected <= shipped
    assert "kgrag_neo4j/cli/__init__.py" in names
    assert "kgrag_neo4j/py.typed" in names  # PEP 561: type checkers read the package's own annotations
