"""The shape of the ``kgrag`` command (no server needed): flat click commands defined at
module level, added to the group in one place; no command builds a retriever or runs the
file loop itself."""

from __future__ import annotations

import ast
from pathlib import Path

import click

from kgrag_neo4j.cli import cli

CLI_DIR = Path(__file__).resolve().parent.parent / "kgrag_neo4j" / "cli"


def _walk(group: click.Group, path: tuple[str, ...] = ()):
    for name, command in group.commands.items():
        yield path + (name,), command
        if isinstance(command, click.Group):
            yield from _walk(command, path + (name,))


def test_every_command_is_defined_at_module_level():
    commands = list(_walk(cli))
    assert len(commands) > 30
    nested = [" ".join(p) for p, c in commands if "<locals>" in c.callback.__qualname__]
    assert nested == [], "commands defined inside functions (register() closures)"
    assert all(c.callback.__module__.startswith("kgrag_neo4j.cli.") for _, c in commands)


def test_the_cli_package_has_no_import_scaffolding():
    for path in CLI_DIR.glob("*.py"):
        tree = ast.parse(path.read_text())
        assert not [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "register"], path.name
        handlers = [n for n in ast.walk(tree) if isinstance(n, ast.ExceptHandler)]
        assert not [h for h in handlers if isinstance(h.type, ast.Name) and h.type.id == "ModuleNotFoundError"], path.name


def test_search_and_ingest_call_the_library():
    """``search`` names no retriever class and ``ingest`` neither selects files nor tallies them:
    ``retrieval.modes.search`` and ``Ingestor.ingest_run`` do."""
    search = (CLI_DIR / "search_cmd.py").read_text()
    ingest = (CLI_DIR / "ingest_cmd.py").read_text()
    for retriever in (
        "VectorRetriever",
        "HybridRetriever",
        "GraphRetriever",
        "PPRRetriever",
        "LocalSearchRetriever",
        "EntityGraphRetriever",
        "build_retriever",
        "retrieve_from",
    ):
        assert retriever not in search
    for step in ("select_files", "IngestTally", "RUN_ENDING_ERRORS", "ingest_paths", "ingest_file"):
        assert step not in ingest


def _tokenizers_parallelism_seen_by_the_cli(env: dict[str, str]) -> str:
    import os
    import subprocess
    import sys

    code = (
        "import os, sys; sys.argv = ['kgrag', '--help']\n"
        "from kgrag_neo4j.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('PARALLELISM=' + os.environ.get('TOKENIZERS_PARALLELISM', '<unset>'))"
    )
    run_env = {k: v for k, v in os.environ.items() if k != "TOKENIZERS_PARALLELISM"} | env
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=run_env).stdout
    return out.strip().splitlines()[-1]


def test_the_cli_runs_the_tokenizer_on_one_thread_unless_the_user_chose():
    assert _tokenizers_parallelism_seen_by_the_cli({}) == "PARALLELISM=false"
    assert _tokenizers_parallelism_seen_by_the_cli({"TOKENIZERS_PARALLELISM": "true"}) == "PARALLELISM=true"
