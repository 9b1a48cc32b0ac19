"""Every Python example in docs/providers.md runs as written, against the test server and a
fake OpenAI-compatible server on 127.0.0.1 (the real openai SDK over real HTTP).

The one change made to the text: ``namespace="demo"`` becomes this test's own namespace,
which holds what ``make demo`` puts in "demo" (the repository's docs, WordLlama embeddings,
sequence edges), so the examples never touch a real "demo" namespace.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .openai_fake import LocalOpenAIServer, scripted_reply

ROOT = Path(__file__).resolve().parent.parent
PROVIDERS = ROOT / "docs" / "providers.md"


def examples() -> list[str]:
    return re.findall(r"```python\n(.*?)```", PROVIDERS.read_text(), re.S)


#: what each example must print, found by a phrase of its code
CHECKS = {
    "OpenAIEmbedder(": lambda out: out.splitlines()[-1] == "768" and "I do not know" in out,
    "answer(": lambda out: "Neo4j creates vector indexes" in out and re.search(r"^\[1\] docs/\S+\.md chk_", out, re.M),
    "integrations.langchain": lambda out: out.startswith("[Document(") and "'graph_context'" in out,
    "asyncio.gather": lambda out: len(out.splitlines()) == 4 and all(line.startswith("['docs/") for line in out.splitlines()),
    "integrations.llamaindex": lambda out: re.match(r"^\d\.\d{3} docs/\S+\.md chk_", out) and len(out.splitlines()) == 5,
}


def check_for(code: str):
    matches = [check for phrase, check in CHECKS.items() if phrase in code]
    assert len(matches) == 1, f"an example in docs/providers.md has no (or several) CHECKS entries:\n{code}"
    return matches[0]


def test_every_example_has_a_check():
    assert len(examples()) >= 4
    for code in examples():
        check_for(code)


@pytest.fixture
def demo(store, neo4j_settings):
    from kgrag_neo4j import IngestGraphOptions, Ingestor, WordLlamaEmbedder

    ingestor = Ingestor(store, WordLlamaEmbedder(), graph=IngestGraphOptions(sequence_edges=True))
    ids = [
        ingestor.ingest_file(ROOT / "docs" / name, source=f"docs/{name}").document_id
        for name in ("retrieval.md", "architecture.md")
    ]
    yield store.namespace
    for document_id in ids:
        store.delete_document(document_id)


@pytest.mark.parametrize("index", range(len(examples())))
def test_example_runs_as_written(index, demo, neo4j_settings):
    code = examples()[index]
    check = check_for(code)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CO_API", "COHERE_", "KGRAG_"))}
    env.update(
        {"NEO4J_URI": neo4j_settings.uri, "NEO4J_USERNAME": neo4j_settings.user, "NEO4J_PASSWORD": neo4j_settings.password or ""}
    )
    if neo4j_settings.database:
        env["NEO4J_DATABASE"] = neo4j_settings.database
    with LocalOpenAIServer() as server:
        server.fake.reply = scripted_reply
        env["OPENAI_BASE_URL"] = server.base_url
        run = subprocess.run(
            [sys.executable, "-c", code.replace('namespace="demo"', f'namespace="{demo}"')],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
    assert run.returncode == 0, run.stderr
    assert check(run.stdout.strip()), run.stdout
