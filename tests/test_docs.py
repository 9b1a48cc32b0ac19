"""Docs are checked against the code: the CLI reference is the real --help, every command
has help text, and the README starts with the two commands CI runs."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import click
import pytest

from kgrag_neo4j.cli import cli

ROOT = Path(__file__).resolve().parent.parent


def _generator():
    spec = importlib.util.spec_from_file_location("generate_cli_reference", ROOT / "docs" / "generate_cli_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cypher_generator():
    spec = importlib.util.spec_from_file_location("generate_cypher_reference", ROOT / "docs" / "generate_cypher_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cypher_reference_is_current():
    assert (ROOT / "docs" / "cypher.md").read_text() == _cypher_generator().render(), (
        "docs/cypher.md is stale: run python docs/generate_cypher_reference.py > docs/cypher.md"
    )


def test_cli_reference_is_current():
    expected = _generator().render()
    assert (ROOT / "docs" / "cli.md").read_text() == expected, (
        "docs/cli.md is stale: run python docs/generate_cli_reference.py > docs/cli.md"
    )


@pytest.mark.parametrize("path", [" ".join(p) for p, _ in _generator().walk(cli, [])])
def test_every_command_has_help_and_an_example(path):
    command = cli
    for part in path.split():
        command = command.commands[part]
    assert command.help and command.help.strip(), path
    if not isinstance(command, click.Group):
        assert "Example:" in command.help, f"kgrag {path} has no Example: line"


def test_readme_starts_with_the_demo_and_test_commands():
    lines = (ROOT / "README.md").read_text().splitlines()
    block = lines[lines.index("```bash") + 1 : lines.index("```bash") + 3]
    assert [line.split("#")[0].strip() for line in block] == ["make demo", "make test"]
    assert "make test" in (ROOT / ".ci" / "run").read_text()


#: names of the design documents and of the systems they came from; "seed" alone is a vector
#: seed of a retrieval and stays
JARGON = re.compile(r"\bseeds?[- ]?\d{3}\b|\bseeds? (?:oasis|writeros|lango|graphrag)\b|\b(?:oasis|writeros|lango)\b", re.I)
#: everything a user reads: the package (docstrings, help, messages), the Cypher headers, the docs
USER_TEXT = ("kgrag_neo4j", "cypher", "docs", "README.md")
TEXT_SUFFIXES = {".py", ".cypher", ".md", ".txt", ".json", ".toml", ".yaml", ".yml", ".html", ".js", ".css"}


def _user_text_files():
    for entry in USER_TEXT:
        path = ROOT / entry
        files = [path] if path.is_file() else sorted(path.rglob("*"))
        yield from (f for f in files if f.is_file() and f.suffix in TEXT_SUFFIXES and "__pycache__" not in f.parts)


def test_help_and_readme_use_the_users_words():
    """Names of the systems the design came from mean nothing to a user: --help and the README
    name the behaviour instead."""
    for name, text in (("kgrag --help pages", _generator().render()), ("README.md", (ROOT / "README.md").read_text())):
        found = sorted({m.group(0) for m in JARGON.finditer(text)})
        assert found == [], f"{name} says {found}"


def test_no_design_document_names_in_what_users_read():
    """The package, the Cypher files and the docs name behaviours ("the original formula",
    "hop-decayed traversal"), never the design documents ("seed 004") or the systems they
    describe."""
    files = list(_user_text_files())
    assert len(files) > 100 and any(f.suffix == ".cypher" for f in files), "the scan found too few files"
    found = []
    for path in files:
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            found += [f"{path.relative_to(ROOT)}:{number}: {m.group(0)}" for m in JARGON.finditer(line)]
    assert found == [], "design-document names in user-facing text:\n" + "\n".join(found)


def test_the_jargon_pattern_finds_what_it_must():
    for text in ("seed 004", "Seed 000's", "seeds 001 and 002", "seed-001", "Lango's nine", "WriterOS", "oasis"):
        assert JARGON.search(text), text
    for text in ("seed_top_k", "the seeds of a retrieval", "a seed's neighbours", "seed 10 chunks"):
        assert not JARGON.search(text), text


def test_the_guarantees_name_tests_that_exist():
    """docs/operations.md names, for each guarantee, the test proving it: every name resolves."""
    import re

    text = (ROOT / "docs" / "operations.md").read_text()
    named = re.findall(r"`(tests/[\w/]+\.py)((?:::\w+)?)`((?:, `::\w+`)*)", text)
    assert named, "no test named in docs/operations.md"
    for path, first, more in named:
        source = (ROOT / path).read_text()
        for name in [first] + re.findall(r"::\w+", more):
            if name:
                assert re.search(rf"^def {name[2:]}\(", source, re.M), f"{path}{name} is not a test"
