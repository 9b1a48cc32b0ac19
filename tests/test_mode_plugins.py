"""A retrieval mode declared in one place: a toy mode (a retriever class and its declaration,
below) reaches ``build_retriever``, ``kgrag search --mode`` with its flags and ``--help``, and
the MCP tools, registered by ``register_mode`` in this process or by an entry point of an
installed package in a ``kgrag`` process, with no other file edited. Against the real server."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kgrag_neo4j import Ingestor, RetrievalMode, VectorRetriever, declare_mode, mode_option
from kgrag_neo4j.errors import ConfigurationError
from kgrag_neo4j.retrieval.modes import build_retriever
from kgrag_neo4j.retrieval.registry import ENTRY_POINT_GROUP, get_mode, mode_names, register_mode, unregister_mode

ROOT = Path(__file__).resolve().parent.parent


class ToyRetriever:
    """Vector search with every score multiplied by ``boost``; ``first_only`` keeps the best."""

    def __init__(self, store, embedder, *, filters=(), boost: float = 1.5, first_only: bool = False, tag: str = "toy"):
        self.inner = VectorRetriever(store, embedder, filters=filters)
        self.boost, self.first_only, self.tag = boost, first_only, tag

    def retrieve(self, query: str, top_k: int = 5):
        found = self.inner.retrieve(query, 1 if self.first_only else top_k)
        return [dataclasses.replace(r, score=r.score * self.boost, explanation=[f"{self.tag} x{self.boost}"]) for r in found]


TOY_MODE = declare_mode(
    "toy",
    ToyRetriever,
    summary="a test mode",
    description="vector search with every score multiplied (a test mode)",
    options={
        "boost": "factor every score is multiplied by.",
        "first_only": "keep only the best result.",
        "tag": mode_option("the word the explanation starts with.", flag=None),
    },
)


@pytest.fixture
def toy():
    register_mode(TOY_MODE)
    yield TOY_MODE
    unregister_mode("toy")


@pytest.fixture
def corpus(store, hashing_embedder):
    ingestor = Ingestor(store, hashing_embedder)
    ingestor.ingest_text("Ned Stark rules Winterfell in the north. Winterfell is cold.", "north.txt")
    ingestor.ingest_text("Cats sleep all day and purr in the sun.", "cats.txt")
    return store


def test_the_declaration_reads_types_and_defaults_from_the_retriever():
    boost, first_only, tag = TOY_MODE.options
    assert (boost.name, boost.type, boost.default, boost.flag) == ("boost", float, 1.5, "boost")
    assert (first_only.type, first_only.default, first_only.flag) == (bool, False, "first-only")
    assert tag.flag is None and tag.default == "toy"  # an option of Python callers only
    graph = get_mode("graph")  # an option dataclass's fields: GraphOptions
    assert graph.option("max_hops").default == 2 and graph.option("max_hops").flag == "hops"
    assert get_mode("entity").option("max_hops").default == 1


def test_a_declaration_the_retriever_contradicts_is_refused():
    with pytest.raises(ConfigurationError, match="takes no option 'hops'"):
        declare_mode("toy2", ToyRetriever, description="x", options={"hops": "hops."})
    with pytest.raises(ConfigurationError, match="mode name"):
        declare_mode("Toy Mode", ToyRetriever, description="x")
    # --hops is graph's and entity's max_hops (a number): a text option cannot share it
    clash = declare_mode("toy2", ToyRetriever, description="x", options={"tag": mode_option("a tag.", flag="hops")})
    with pytest.raises(ConfigurationError, match="--hops"):
        register_mode(clash)
    assert "toy2" not in mode_names()


def test_a_registered_mode_is_built_searched_from_the_cli_and_offered_as_an_mcp_tool(toy, corpus, hashing_embedder, kgrag_cli):
    assert isinstance(toy, RetrievalMode) and mode_names()[-1] == "toy"
    with pytest.raises(ConfigurationError, match="already registered"):
        register_mode(TOY_MODE)

    # build_retriever: its options, its defaults, and a refusal naming the modes that take one
    retriever = build_retriever("toy", corpus, hashing_embedder, boost=2.0)
    assert isinstance(retriever, ToyRetriever) and retriever.boost == 2.0 and retriever.tag == "toy"
    with pytest.raises(ConfigurationError, match=r"mode 'toy' cannot honour max_hops \(taken by: graph, entity\)"):
        build_retriever("toy", corpus, hashing_embedder, max_hops=1)

    # kgrag search --help: the choice, its summary, its flags with the defaults the retriever has
    help_text = " ".join(kgrag_cli("search", "--help", connect=False).output.split())
    assert "| toy (a test mode)." in help_text and "[vector|hybrid|graph|ppr|entity|local|toy]" in help_text
    assert "--boost FLOAT toy mode: factor every score is multiplied by. [default: 1.5]" in help_text
    assert "--first-only toy mode: keep only the best result." in help_text
    assert "--tag" not in help_text

    # kgrag search --mode toy against the server: its flags reach the retriever
    def search(*args: str) -> list[dict]:
        result = kgrag_cli(
            "search", "Ned Stark Winterfell", *args, "--json", "--namespace", corpus.namespace, "--embedder", "hashing"
        )
        assert result.exit_code == 0, result.stderr
        return json.loads(result.stdout)["results"]

    plain = search("--mode", "vector")
    doubled = search("--mode", "toy", "--boost", "2")
    assert len(plain) == 2 and [r["id"] for r in doubled] == [r["id"] for r in plain]
    assert [r["score"] for r in doubled] == pytest.approx([2 * r["score"] for r in plain])
    assert doubled[0]["explanation"] == ["toy x2.0"]
    assert [r["id"] for r in search("--mode", "toy", "--first-only")] == [plain[0]["id"]]
    # a flag the mode cannot honour, both ways
    for args, flag in ((["--mode", "toy", "--hops", "1"], "--hops"), (["--mode", "vector", "--boost", "2"], "--boost")):
        refused = kgrag_cli("search", "q", *args, "--namespace", corpus.namespace, "--embedder", "hashing")
        assert refused.exit_code == 2 and f"{flag} cannot be used with --mode {args[1]}" in refused.stderr
    # kgrag ask offers it too
    assert "toy]" in " ".join(kgrag_cli("ask", "--help", connect=False).output.split())

    # the MCP server: a tool per mode, described by the declaration
    pytest.importorskip("mcp")
    from kgrag_neo4j.integrations.mcp import build_server

    retrievers = {mode: build_retriever(mode, corpus, hashing_embedder) for mode in mode_names()}
    server = build_server(
        namespace=corpus.namespace, store=corpus, retrievers=retrievers, ingestor=Ingestor(corpus, hashing_embedder)
    )

    async def tools_and_call():
        tools = {t.name: t.description for t in await server.list_tools()}
        result = await server.call_tool("search_toy", {"query": "Ned Stark Winterfell", "top_k": 1})
        return tools, json.loads(result.content[0].text)

    tools, found = asyncio.run(tools_and_call())
    assert tools["search_toy"] == (
        "Search the knowledge graph: vector search with every score multiplied (a test mode). Returns the top_k passages."
    )
    assert found["mode"] == "toy" and found["results"][0]["id"] == plain[0]["id"]
    assert found["results"][0]["score"] == pytest.approx(1.5 * plain[0]["score"])


def test_an_unregistered_mode_leaves_the_command_line(kgrag_cli):
    register_mode(TOY_MODE)
    assert "--boost FLOAT" in kgrag_cli("search", "--help", connect=False).output
    unregister_mode("toy")
    help_text = kgrag_cli("search", "--help", connect=False).output
    assert "--boost FLOAT" not in help_text and "toy" not in help_text
    with pytest.raises(ConfigurationError, match="unknown mode 'toy'"):
        get_mode("toy")


def test_an_installed_packages_entry_point_adds_its_mode_to_kgrag(corpus, neo4j_settings, tmp_path):
    """A package declaring ``toy = tests.test_mode_plugins:TOY_MODE`` in the ``kgrag_neo4j.modes``
    group: ``kgrag`` finds it with nothing else changed."""
    dist = tmp_path / "kgrag_toy_mode-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: kgrag-toy-mode\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\ntoy = tests.test_mode_plugins:TOY_MODE\n")
    paths = [str(tmp_path), str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths), "NEO4J_PASSWORD": neo4j_settings.password or ""}

    def kgrag(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "kgrag_neo4j", *args], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120
        )

    shown = kgrag("search", "--help")
    assert shown.returncode == 0, shown.stderr
    assert "toy (a test mode)" in shown.stdout and "--boost" in shown.stdout
    connect = ["--uri", neo4j_settings.uri, "--user", neo4j_settings.user]
    if neo4j_settings.database:
        connect += ["--database", neo4j_settings.database]
    found = kgrag(
        *connect,
        "search",
        "Ned Stark Winterfell",
        "--mode",
        "toy",
        "--boost",
        "3",
        "--json",
        "--namespace",
        corpus.namespace,
        "--embedder",
        "hashing",
    )
    assert found.returncode == 0, found.stderr
    results = json.loads(found.stdout)["results"]
    assert results and results[0]["explanation"] == ["toy x3.0"]
    assert "toy" not in mode_names()  # this process has no such package


def test_kgrag_help_reads_no_retriever_and_no_plugin():
    """The modes are read when a command that takes them is parsed, not when ``kgrag`` starts:
    ``kgrag --help`` imports no retriever module and looks up no entry point."""
    code = (
        "import sys; sys.argv = ['kgrag', '--help']\n"
        "from kgrag_neo4j.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('kgrag_neo4j.retrieval.retrievers', 'kgrag_neo4j.retrieval.ppr', "
        "'importlib.metadata') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[]"
    # while `kgrag search --help` does read them
    code = code.replace("'--help'", "'search', '--help'")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert "kgrag_neo4j.retrieval.retrievers" in done.stdout.splitlines()[-1]
