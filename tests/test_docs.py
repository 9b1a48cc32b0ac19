"""Docs are checked against the code: the CLI reference is the real --help, every command
has help text, and the README starts with the two commands CI runs."""

from __future__ import annotations

import importlib.util
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


def test_help_and_readme_use_the_users_words():
    """Names of the systems the design came from mean nothing to a user: --help and the README
    name the behaviour instead (docs/ may cite where a design came from)."""
    import re

    jargon = re.compile(r"\bseeds? \d{3}\b|\bseeds? (?:oasis|writeros|lango|graphrag)\b|\b(?:oasis|writeros|lango)\b", re.I)
    for name, text in (("kgrag --help pages", _generator().render()), ("README.md", (ROOT / "README.md").read_text())):
        found = sorted({m.group(0) for m in jargon.finditer(text)})
        assert found == [], f"{name} says {found}"
