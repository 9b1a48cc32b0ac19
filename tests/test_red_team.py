"""Red-team findings on the MCP server and on what an ingest reads: globs and symlinks leading
out of the allowed folders, a file swapped between listing and reading, a server started
without ``--allow-path``, and the server's limits (concurrency, sizes, cancellation, null
bytes). The MCP tools run in-process on the SDK's own server, against the real database."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from pathlib import Path

import pytest

from kgrag_neo4j.errors import InputError
from kgrag_neo4j.ingestion.extractors import ExtractorRegistry
from kgrag_neo4j.ingestion.files import read_regular_file, select_files
from kgrag_neo4j.ingestion.ingestor import Ingestor

pytest.importorskip("mcp")

from kgrag_neo4j.integrations import mcp as kgrag_mcp  # noqa: E402

from .test_cli import kgrag  # noqa: E402, F401 - the fixture
from .test_cli_llm import ingested, llm  # noqa: E402, F401 - the fixtures

EXTENSIONS = ExtractorRegistry.default().extensions
SECRET = "password_set pid port uri hunter2-secret"


async def call(server, tool: str, arguments: dict) -> dict:
    """A tool's JSON answer; a refused call raises the SDK's ToolError with its one line."""
    result = await server.call_tool(tool, arguments)
    return json.loads(result.content[0].text)


def tool_error(server, tool: str, arguments: dict) -> str:
    from mcp.server.mcpserver.exceptions import ToolError

    with pytest.raises(ToolError) as info:
        asyncio.run(call(server, tool, arguments))
    return str(info.value)


@pytest.fixture
def escape(tmp_path) -> Path:
    """ROOT with one file of its own and symlinks leading out of it: a file symlink
    (creds.json -> the outside server.json) and a folder symlink (linked -> the outside folder)."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "notes.txt").write_text("Neo4j keeps the graph of notes.")
    (outside / "server.json").write_text(json.dumps({"password": SECRET}))
    (outside / "secret.txt").write_text(SECRET)
    (root / "creds.json").symlink_to(outside / "server.json")
    (root / "linked").symlink_to(outside, target_is_directory=True)
    return root


def mcp_server(store, embedder, roots=(), retrievers=None, ingestor=None):
    return kgrag_mcp.build_server(
        namespace=store.namespace,
        store=store,
        retrievers=retrievers or {},
        ingestor=ingestor or Ingestor(store, embedder),
        allowed_roots=[str(r) for r in roots],
    )


def stored_text(store) -> str:
    return " ".join(c.content for d in store.list_documents() for c in store.list_document_chunks(d.id))


# -- 1. a glob escapes --allow-path ------------------------------------------------------------------


@pytest.mark.parametrize("pattern", ["cred[s].json", "*", "**/*.txt", "*/secret.txt", "linked/*"])
def test_a_glob_in_ingest_path_never_reads_outside_the_allowed_folders(store, hashing_embedder, escape, pattern):
    server = mcp_server(store, hashing_embedder, roots=[escape])
    try:
        answer = asyncio.run(call(server, "ingest_path", {"path": f"{escape}/{pattern}"}))
        assert all("outside" in row.get("error", "") for row in answer["files"] if row["status"] == "failed")
    except Exception as exc:  # the SDK's ToolError: a pattern leading out refused as a whole
        assert "outside" in str(exc)
    assert SECRET not in stored_text(store)
    assert all(d.source.startswith(str(escape.resolve()) + os.sep) for d in store.list_documents())


def test_a_glob_on_the_command_line_stays_in_its_folder_unless_symlinks_are_followed(escape):
    chosen = select_files([f"{escape}/*", f"{escape}/**/*.txt"], extensions=EXTENSIONS)
    assert [Path(f).name for f in chosen.files] == ["notes.txt"]
    reasons = {Path(s.path).name: s.reason for s in chosen.skipped}
    assert set(reasons) == {"creds.json", "secret.txt"} and all("--follow-symlinks" in r for r in reasons.values())
    followed = select_files([f"{escape}/*"], extensions=EXTENSIONS, follow_symlinks=True)
    assert sorted(Path(f).name for f in followed.files) == ["creds.json", "notes.txt"]


def test_the_cli_skips_a_glob_match_that_leads_out(kgrag_cli, namespace, escape):
    result = kgrag_cli("ingest", f"{escape}/*", "--namespace", namespace, "--embedder", "hashing", "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["files"]
    assert {Path(r["path"]).name: r["status"] for r in rows} == {"notes.txt": "new", "creds.json": "skipped"}


# -- 2. a file swapped for a symlink between listing and reading ---------------------------------------


def test_a_file_swapped_after_listing_is_not_read(tmp_path, store, hashing_embedder):
    race, outside = tmp_path / "race", tmp_path / "outside.txt"
    race.mkdir()
    outside.write_text(SECRET)
    (race / "aa.txt").write_text("the first file")
    (race / "zz.txt").write_text("the file that gets swapped")
    listed = select_files([str(race)], extensions=EXTENSIONS).files
    assert [Path(f).name for f in listed] == ["aa.txt", "zz.txt"]
    # between the listing and the read: a symlink to a file outside takes its place
    (race / "zz.txt").unlink()
    (race / "zz.txt").symlink_to(outside)
    with pytest.raises(InputError, match="replaced by a symlink after it was listed"):
        read_regular_file(listed[1], max_bytes=1 << 20)
    results = Ingestor(store, hashing_embedder).ingest_paths(listed)
    assert [r.status for r in results] == ["new", "failed"]
    assert SECRET not in stored_text(store)
    # or another file: not the one that was checked either
    (race / "new.tmp").write_text("a newer file")
    os.replace(race / "new.tmp", race / "zz.txt")
    with pytest.raises(InputError, match="changed after it was listed"):
        read_regular_file(listed[1], max_bytes=1 << 20)


def test_a_folder_swapped_for_a_symlink_after_listing_is_not_read(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    (root / "sub" / "zz.txt").write_text("inside")
    listed = select_files([str(root)], extensions=EXTENSIONS).files
    # the same file (a hard link) reached through a folder that now leads outside
    os.link(root / "sub" / "zz.txt", outside / "zz.txt")
    (root / "sub" / "zz.txt").unlink()
    (root / "sub").rmdir()
    (root / "sub").symlink_to(outside, target_is_directory=True)
    if not os.path.exists("/proc/self/fd"):
        pytest.skip("where an open file lies is read from /proc")
    with pytest.raises(InputError, match="now leads out of"):
        read_regular_file(listed[0], max_bytes=1 << 20)


# -- 3. no --allow-path: no file access ---------------------------------------------------------------


def test_without_allowed_folders_the_server_reads_no_file(store, hashing_embedder, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.txt").write_text("a file in the working directory")
    server = mcp_server(store, hashing_embedder)
    names = {t.name for t in asyncio.run(server.list_tools())}
    assert "ingest_path" not in names and {"ingest_text", "list_documents"} <= names


# -- 8. limits -----------------------------------------------------------------------------------


class _CountingRetriever:
    """A retriever that records how many searches run at once (the store is not involved)."""

    def __init__(self) -> None:
        self.now = self.most = 0

    async def aretrieve(self, query: str, top_k: int):
        self.now += 1
        self.most = max(self.most, self.now)
        await asyncio.sleep(0.01)
        self.now -= 1
        return []

    def retrieve(self, query: str, top_k: int):
        return []


def test_three_hundred_concurrent_calls_are_served_a_bounded_number_at_a_time(store, hashing_embedder):
    retriever = _CountingRetriever()
    server = mcp_server(store, hashing_embedder, retrievers={"vector": retriever})

    async def flood() -> list:
        return await asyncio.gather(*(call(server, "search_vector", {"query": f"q{i}"}) for i in range(300)))

    answers = asyncio.run(flood())
    assert len(answers) == 300 and all(a["results"] == [] for a in answers)
    assert retriever.most <= kgrag_mcp.MAX_CONCURRENT_CALLS


def test_sizes_are_limited_with_a_clear_error(store, hashing_embedder):
    server = mcp_server(store, hashing_embedder, retrievers={"vector": _CountingRetriever()})
    big = "x" * (kgrag_mcp.MAX_TEXT_BYTES + 1)
    assert "InputError: the text is" in tool_error(server, "ingest_text", {"text": big, "source": "big.txt"})
    long_query = "neo4j " * (kgrag_mcp.MAX_QUERY_CHARS // 6 + 1)
    assert "InputError: the query is" in tool_error(server, "search_vector", {"query": long_query})
    assert "InputError: source" in tool_error(server, "ingest_text", {"text": "t", "source": "s" * 5000})
    assert store.list_documents() == []


def test_a_null_byte_in_a_path_is_one_clear_error(store, hashing_embedder, tmp_path):
    server = mcp_server(store, hashing_embedder, roots=[tmp_path])
    message = tool_error(server, "ingest_path", {"path": f"{tmp_path}/a\x00.txt"})
    assert "InputError: path holds a null byte" in message and "Traceback" not in message


class _GatedEmbedder:
    """The hashing embedder, held at its first call until the test opens the gate."""

    def __init__(self, inner) -> None:
        self.inner, self.name, self.dimensions = inner, inner.name, inner.dimensions
        self.entered, self.gate = threading.Event(), threading.Event()

    def embed(self, texts, *, input_type="document"):
        self.entered.set()
        self.gate.wait(30)
        return self.inner.embed(texts, input_type=input_type)


def test_a_cancelled_ingest_writes_nothing_and_ends_with_its_worker(store, hashing_embedder):
    embedder = _GatedEmbedder(hashing_embedder)
    server = mcp_server(store, embedder, ingestor=Ingestor(store, embedder))

    async def disconnect() -> None:
        task = asyncio.ensure_future(call(server, "ingest_text", {"text": "Neo4j keeps graphs. " * 200, "source": "s.txt"}))
        await asyncio.to_thread(embedder.entered.wait, 30)
        task.cancel()  # what the SDK does when the client cancels or goes away
        await asyncio.sleep(0.2)
        embedder.gate.set()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(disconnect())
    # the worker was told to stop before writing, and the call ended only after it had
    assert store.list_documents() == []
    [row] = [r for r in store.list_namespaces() if r.namespace == store.namespace] or [None]
    assert row is None or (row.documents, row.chunks) == (0, 0)
    # the server still ingests afterwards
    embedder.gate.set()
    answer = asyncio.run(call(server, "ingest_text", {"text": "Neo4j keeps graphs.", "source": "t.txt"}))
    assert answer["status"] == "new"


# -- 5. PPR while documents are replaced -------------------------------------------------------------


def test_ppr_ranks_a_neighbourhood_read_while_its_chunks_were_deleted():
    from kgrag_neo4j.options import PPROptions
    from kgrag_neo4j.retrieval.ppr import ppr_rank
    from kgrag_neo4j.types import Neighbourhood

    clean = Neighbourhood(
        seeds=(("c1", 0.9), ("c2", 0.7)),
        query_entities=(("e1", "Neo4j", 1.0, "named"),),
        entities={"e1": ("Neo4j", 2), "e2": ("Lucene", 1)},
        chunk_degrees={"c1": 1.0, "c2": 0.5, "c3": 1.5},
        mentions=(("c1", "e1"), ("c3", "e1"), ("c3", "e2")),
        chunk_edges=(("c1", "c2", 0.8),),
        relations=(("e1", "e2", 1.0),),
    )
    # what a neighbourhood read racing a replace returns: the rows of nodes deleted meanwhile
    # (read committed) have null ids, names, degrees
    torn = Neighbourhood(
        seeds=clean.seeds + ((None, 0.8),),
        query_entities=clean.query_entities + ((None, None, 0.9, "resembles"),),
        entities={**clean.entities, None: (None, 0)},
        chunk_degrees={**clean.chunk_degrees, None: 0.0},
        mentions=clean.mentions + ((None, "e1"), ("c1", None)),
        chunk_edges=clean.chunk_edges + (("c1", None, 0.5), (None, "c2", 0.5)),
        relations=clean.relations + (("e1", None, 1.0),),
    )
    assert ppr_rank(torn, PPROptions()).mass == ppr_rank(clean, PPROptions()).mass

    from kgrag_neo4j.retrieval.ppr import without_vanished

    assert without_vanished(torn) == clean


# -- 9. look-alike namespaces ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "why"),
    [
        (" victim", "starts or ends with a space"),
        ("victim ", "starts or ends with a space"),
        ("v\u0456ctim", "mixes the letters of CYRILLIC, LATIN"),  # a Cyrillic i
        ("\uff56ictim", "not in Unicode normal form NFKC"),  # a full-width v
        ("vic\u200btim", "only visible characters"),
    ],
)
def test_a_namespace_that_looks_like_another_is_refused(kgrag_cli, name, why):
    from kgrag_neo4j.errors import ConfigurationError
    from kgrag_neo4j.settings import validate_namespace

    with pytest.raises(ConfigurationError, match=why):
        validate_namespace(name)
    result = kgrag_cli("docs", "list", "--namespace", name)
    assert result.exit_code != 0 and why.split(" ")[0] in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("name", ["victim", "t-1a2b", "docs/2024 notes", "日本語のdocs", "русский", "Ελληνικά", "café"])
def test_names_of_one_script_stay_valid(name):
    from kgrag_neo4j.settings import validate_namespace

    assert validate_namespace(name) == name


# -- 6. an over-long entity name from a model ---------------------------------------------------------


class _Chat:
    """A chat model whose reply is fixed (only the provider protocol is faked, not the store)."""

    model = "scripted"

    def __init__(self, reply: str | Exception) -> None:
        self.reply = reply

    def chat(self, messages, *, json_schema=None) -> str:
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply


def _staged(driver, namespace: str) -> int:
    with driver.session() as session:
        return session.run("MATCH (e:Entity {staged_namespace: $ns}) RETURN count(e) AS n", ns=namespace).single()["n"]


def test_an_over_long_entity_name_is_dropped_and_the_build_goes_on(driver, store, hashing_embedder):
    from kgrag_neo4j.entities.extract_llm import LLMEntityExtractor
    from kgrag_neo4j.entities.pipeline import build_entities

    Ingestor(store, hashing_embedder).ingest_text("Alice works for Acme in Paris.", source="a.txt")
    [chunk] = store.list_document_chunks(store.list_documents()[0].id)
    long_name = "Acme " * 4000
    reply = json.dumps(
        {
            "entities": [
                {"name": "Alice", "type": "PERSON", "description": "a person", "chunk_ids": [chunk.id]},
                {"name": long_name, "type": "ORGANIZATION", "description": "a model's runaway", "chunk_ids": [chunk.id]},
            ],
            "relationships": [{"source": "Alice", "target": long_name, "type": "WORKS_FOR", "strength": 0.9}],
        }
    )
    extractor = LLMEntityExtractor(_Chat(reply), namespace=store.namespace)
    result = build_entities(store, hashing_embedder, extractor=extractor, entity_edges=False)
    assert result.entities == 1 and result.dropped.get("long_name") == 1
    assert [r.entity.name for r in store.list_entities()] == ["Alice"]
    assert _staged(driver, store.namespace) == 0


def test_a_name_the_database_cannot_index_is_refused_before_anything_is_staged(driver, store):
    from kgrag_neo4j.store.entities import ENTITY_ROWS
    from kgrag_neo4j.types.entities import Entity

    candidates = sorted(
        (Entity.create(f"Name {i}", "CONCEPT", namespace=store.namespace) for i in range(2 * ENTITY_ROWS)), key=lambda e: e.id
    )
    # the giant in a later transaction than the first: the one before it would have been committed
    giant = next(
        g
        for g in (Entity.create("x" * 20_000 + str(k), "CONCEPT", namespace=store.namespace) for k in range(1000))
        if g.id > candidates[ENTITY_ROWS].id
    )
    entities = [*candidates, giant]
    with pytest.raises(InputError, match="the limit is"):
        store.upsert_entities(entities, build="b1")
    assert _staged(driver, store.namespace) == 0


# -- 7. an LLM that fails every batch -----------------------------------------------------------------


def test_an_entity_build_whose_every_batch_fails_is_an_error(store, hashing_embedder):
    from kgrag_neo4j.entities.extract_llm import LLMEntityExtractor
    from kgrag_neo4j.entities.pipeline import build_entities
    from kgrag_neo4j.errors import ProviderError

    Ingestor(store, hashing_embedder).ingest_text("Alice works for Acme in Paris. " * 20, source="a.txt")
    extractor = LLMEntityExtractor(_Chat(ProviderError("OpenAI chat (m) failed with HTTP 500")), namespace=store.namespace)
    with pytest.raises(ProviderError, match="entity extraction failed for .*HTTP 500"):
        build_entities(store, hashing_embedder, extractor=extractor, entity_edges=False)
    assert store.list_entities() == []


# -- 7. LLM error paths ---------------------------------------------------------------------------

KEY = "sk-proj-Zq8+Kf/9Lm2=XyW7TbNc"


def _openai_chat(handler, **options):
    import httpx

    from kgrag_neo4j.providers.openai import OpenAIChat

    options.setdefault("api_key", KEY)
    options.setdefault("sleep", options.pop("sleeps", []).append)
    return OpenAIChat(http_client=httpx.Client(transport=httpx.MockTransport(handler)), env={}, **options)


def test_a_malformed_body_is_one_response_error_whole_or_streamed():
    import httpx

    from kgrag_neo4j.errors import ProviderResponseError

    from .openai_fake import FakeOpenAI

    fake = FakeOpenAI()
    chat = _openai_chat(fake)
    malformed = httpx.Response(200, headers={"content-type": "application/json"}, content=b'{"choices": [tru')
    fake.queue("/v1/chat/completions", malformed)
    with pytest.raises(ProviderResponseError, match="not the expected JSON") as info:
        chat.chat([{"role": "user", "content": "hi"}])
    assert "\n" not in str(info.value)
    fake.queue(
        "/v1/chat/completions", httpx.Response(200, headers={"content-type": "text/event-stream"}, content=b"data: {broken\n\n")
    )
    with pytest.raises(ProviderResponseError, match="not the expected JSON"):
        list(chat.chat_stream([{"role": "user", "content": "hi"}]))
    fake.queue("/v1/chat/completions", malformed)  # not an event stream at all: no text
    with pytest.raises(ProviderResponseError, match="no text"):
        list(chat.chat_stream([{"role": "user", "content": "hi"}]))


def test_a_retry_after_of_a_day_is_not_waited_for():
    from kgrag_neo4j.errors import RateLimitError

    from .openai_fake import FakeOpenAI, error

    fake, sleeps = FakeOpenAI(), []
    fake.queue("/v1/chat/completions", error(429, "slow down", {"retry-after": "100000"}))
    with pytest.raises(RateLimitError, match="asks to wait 100000 s") as info:
        _openai_chat(fake, sleeps=sleeps).chat([{"role": "user", "content": "hi"}])
    assert sleeps == [] and len(fake.requests) == 1 and "try again later" in str(info.value)
    fake.queue("/v1/chat/completions", *[error(503, "busy", {"retry-after": "25"})] * 5)
    with pytest.raises(Exception, match="HTTP 503"):
        _openai_chat(fake, sleeps=sleeps, timeout=30).chat([{"role": "user", "content": "hi"}])
    assert sum(sleeps) <= 2 * 30  # the waits fit the call's budget: twice its timeout


def test_a_silent_server_times_out_in_about_twice_the_timeout():
    import socket
    import time

    from kgrag_neo4j.errors import ProviderTimeout
    from kgrag_neo4j.providers.openai import OpenAIChat

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)  # connections are accepted by the kernel; nothing ever answers
        chat = OpenAIChat(
            api_key=KEY, base_url=f"http://127.0.0.1:{silent.getsockname()[1]}/v1", env={}, timeout=0.5, max_retries=4
        )
        started = time.monotonic()
        with pytest.raises(ProviderTimeout, match="timed out"):
            chat.chat([{"role": "user", "content": "hi"}])
        assert time.monotonic() - started < 2.5  # 5 attempts and their backoff took ~7 s


@pytest.mark.parametrize(
    "echo", [KEY[:14] + "...", KEY.upper(), KEY.replace("+", "%2B").replace("/", "%2F").replace("=", "%3D"), KEY[5:]]
)
def test_the_api_key_is_masked_however_a_server_echoes_it(echo):
    from kgrag_neo4j.errors import ProviderError

    from .openai_fake import FakeOpenAI, error

    fake = FakeOpenAI()
    fake.queue("/v1/chat/completions", error(401, f"Incorrect API key provided: {echo}. Check it."))
    with pytest.raises(ProviderError) as info:
        _openai_chat(fake).chat([{"role": "user", "content": "hi"}])
    text = str(info.value)
    assert "<secret>" in text and "Check it." in text
    for run in (KEY[i : i + 6] for i in range(len(KEY) - 5)):
        assert run.lower() not in text.lower()
    assert info.value.__cause__ is None  # the SDK's error holds the echo: not chained


def test_the_cli_says_one_line_and_fails_when_the_model_answers_garbage(kgrag, ingested, llm):  # noqa: F811
    import httpx

    from .openai_fake import error

    common = ("--namespace", ingested, "--embedder", "hashing", "--llm", "openai")
    malformed = httpx.Response(200, headers={"content-type": "application/json"}, content=b"{not json")
    llm.fake.queue("/v1/chat/completions", malformed, malformed)
    code, _, err = kgrag("ask", "How are vector indexes created?", *common)
    assert code == 1 and "Traceback" not in err and "JSONDecodeError" not in err
    assert [line for line in err.splitlines() if "not the expected JSON" in line]
    code, out, err = kgrag("ask", "How are vector indexes created?", *common, "--stream")
    assert code == 1 and "no text" in err and "Traceback" not in err
    llm.fake.queue("/v1/chat/completions", *[error(400, "model not found")] * 10)
    code, out, err = kgrag("entities", "build", *common)
    assert code == 1 and "entity extraction failed for" in err and "model not found" in err


# -- 10. minor ----------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["vector", "hybrid", "graph", "entity", "local", "ppr"])
def test_a_top_k_too_large_is_refused_naming_the_value_given(store, hashing_embedder, mode):
    from kgrag_neo4j.retrieval.modes import build_retriever
    from kgrag_neo4j.validation import MAX_TOP_K

    Ingestor(store, hashing_embedder).ingest_text("Neo4j keeps the graph. Lucene indexes the text.", source="a.txt")
    retriever = build_retriever(mode, store, hashing_embedder)
    with pytest.raises(InputError, match=r"top_k must be an integer from 1 to 1000000, got 100000000$"):
        retriever.retrieve("neo4j", 100_000_000)
    found = retriever.retrieve("neo4j", MAX_TOP_K)  # the largest allowed runs
    assert len(found) >= (0 if mode == "local" else 1)  # local search reads entities: none were built


def test_the_http_endpoint_answers_only_its_own_origin(driver, neo4j_settings):
    import urllib.request

    if os.environ.get("NEO4J_URI"):
        pytest.skip("an external server was given; its configuration is not ours")
    with driver.session() as session:
        settings = {
            r["name"]: r["value"]
            for r in session.run(
                "SHOW SETTINGS YIELD name, value WHERE name IN ['server.http.listen_address', "
                "'dbms.security.http_access_control_allow_origin'] RETURN name, value"
            )
        }
    if not settings.get("server.http.listen_address"):
        pytest.skip("this server does not report its HTTP address")
    own = f"http://{settings['server.http.listen_address']}"
    assert settings["dbms.security.http_access_control_allow_origin"] == own
    request = urllib.request.Request(own + "/", headers={"Origin": "http://evil.example", "Accept": "application/json"})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=10) as response:
        allowed = response.headers.get("Access-Control-Allow-Origin")
    assert allowed == own and allowed != "*"


def test_a_replace_with_similarity_edges_links_in_memory_when_the_namespace_fits(
    driver, neo4j_settings, namespace, schema_ready, hashing_embedder, tmp_path
):
    from kgrag_neo4j.options import IngestGraphOptions
    from kgrag_neo4j.store import Neo4jStore

    statements: list[str] = []
    store = Neo4jStore(
        driver,
        namespace=namespace,
        database=neo4j_settings.database,
        tracer=lambda name, params, seconds: statements.append(name),
    )
    folder = tmp_path / "kb"
    folder.mkdir()
    words = "neo4j graph vector index chunk entity lucene cypher".split()
    for version in (1, 2):
        for i in range(6):
            text = "\n\n".join(" ".join(words[(i + p + k) % len(words)] for k in range(40)) + f" v{version}" for p in range(3))
            (folder / f"d{i}.txt").write_text(text)
        statements.clear()
        ingestor = Ingestor(store, hashing_embedder, graph=IngestGraphOptions(similarity_edges=True, similarity_threshold=0.5))
        tally = ingestor.ingest_run([str(folder)])
        assert tally.counts["new" if version == 1 else "replaced"] == 6
    # the replace compared with the stored chunks in memory: no vector-index read per batch
    # (which, with other namespaces crowding the index, scanned the namespace once per chunk)
    assert "graph/nearest_chunks" not in statements
    from kgrag_neo4j.types import RelationType

    chunk_ids = {c.id for d in store.list_documents() for c in store.list_document_chunks(d.id)}
    similar = [e for e in store.get_edges(sorted(chunk_ids)) if e.relation == RelationType.SIMILAR_TO]
    # every new chunk kept its neighbours: none were spent on the old versions being dropped
    assert {e.source_id for e in similar} == chunk_ids and all(e.target_id in chunk_ids for e in similar)


def test_chunks_left_staged_by_a_killed_write_are_not_counted_as_chunks(store, kgrag):  # noqa: F811
    # what a large document's write leaves when its process is killed between staging
    # transactions (an MCP client that disconnects and kills the server mid-ingest)
    document_id = store.document_id_of_source("big.txt")
    rows = [
        {
            "id": f"staged-{i}",
            "document_id": document_id,
            "props": {"content": f"piece {i}", "chunk_index": i},
            "embedding": None,
            "parent_id": None,
        }
        for i in range(3)
    ]
    store.runner.write(
        "chunks/stage_chunks", namespace=store.namespace, document_id=document_id, rows=rows, vector_property="embedding"
    )
    [row] = [r for r in store.list_namespaces() if r.namespace == store.namespace]
    assert (row.documents, row.chunks, row.staged) == (0, 0, 3)
    code, out, _ = kgrag("namespace", "list", "--json")
    assert (
        code == 0
        and {"chunks": 0, "staged": 3}.items() <= next(r for r in json.loads(out) if r["namespace"] == store.namespace).items()
    )
    # listed, so they can be seen and deleted with the namespace
    code, out, _ = kgrag("namespace", "delete", store.namespace, "--yes", "--json")
    assert code == 0 and json.loads(out)["chunks"] == 3
    assert store.namespace not in {r.namespace for r in store.list_namespaces()}


def test_a_look_alike_namespace_made_before_the_rule_can_still_be_deleted(driver, kgrag_cli):
    import uuid

    name = f" victim-{uuid.uuid4().hex[:8]}"  # written before such names were refused
    with driver.session() as session:
        session.run("CREATE (:Document {id: $id, namespace: $ns, source: 'old.txt'})", id=f"doc-{name.strip()}", ns=name)
    refused = kgrag_cli("docs", "list", "--namespace", name)
    assert refused.exit_code == 1 and "starts or ends with a space" in refused.stderr
    deleted = kgrag_cli("namespace", "delete", name, "--yes", "--json")
    assert deleted.exit_code == 0, deleted.output
    assert json.loads(deleted.stdout)["documents"] == 1
    with driver.session() as session:
        assert session.run("MATCH (d:Document {namespace: $ns}) RETURN count(d) AS n", ns=name).single()["n"] == 0
