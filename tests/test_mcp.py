"""``kgrag mcp`` driven by the MCP SDK's own client over stdio, against the real server."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest

pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402


def _field(obj, name: str):
    """mcp 2 names fields in snake_case, mcp 1 in camelCase."""
    camel = name.split("_")[0] + "".join(w.title() for w in name.split("_")[1:])
    return getattr(obj, name) if hasattr(obj, name) else getattr(obj, camel)


def _error(result) -> bool:
    return bool(_field(result, "is_error"))


def _payload(result) -> dict:
    """The tool's result: structured content when the SDK gives it, else the JSON text."""
    assert not _error(result), result.content
    if _field(result, "structured_content"):
        data = _field(result, "structured_content")
        return data.get("result", data) if set(data) == {"result"} else data
    return json.loads(result.content[0].text)


def test_mcp_server_tools_over_stdio(neo4j_settings, schema_ready, namespace, tmp_path):
    folder = tmp_path / "kb"
    folder.mkdir()
    (folder / "indexes.md").write_text("# Indexes\n\nNeo4j creates vector indexes with CREATE VECTOR INDEX.")
    (folder / "cats.md").write_text("# Cats\n\nCats sleep all day and purr.")
    outside = tmp_path / "secret.md"
    outside.write_text("not to be read")
    args = ["-m", "kgrag_neo4j", "--uri", neo4j_settings.uri, "--user", neo4j_settings.user]
    if neo4j_settings.database:
        args += ["--database", neo4j_settings.database]
    args += ["mcp", "--namespace", namespace, "--embedder", "hashing", "--allow-path", str(folder)]
    params = StdioServerParameters(command=sys.executable, args=args, env={"NEO4J_PASSWORD": neo4j_settings.password or ""})

    async def scenario() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = {t.name: t for t in (await session.list_tools()).tools}
            assert {
                "search_vector",
                "search_hybrid",
                "search_graph",
                "search_ppr",
                "search_entity",
                "search_local",
                "ingest_text",
                "ingest_path",
                "list_documents",
            } <= set(tools)
            assert set(_field(tools["search_graph"], "input_schema")["properties"]) == {"query", "top_k"}

            added = _payload(await session.call_tool("ingest_path", {"path": str(folder)}))
            assert sorted(r["status"] for r in added["files"]) == ["new", "new"] and added["failed"] == 0
            text = _payload(
                await session.call_tool("ingest_text", {"text": "Lucene serves full-text search.", "source": "notes/lucene.txt"})
            )
            assert text["status"] == "new" and text["chunks"] == 1

            refused = await session.call_tool("ingest_path", {"path": str(outside)})
            assert _error(refused) and "outside the folders" in refused.content[0].text

            docs = _payload(await session.call_tool("list_documents", {}))
            assert docs["namespace"] == namespace
            assert sorted(d["source"] for d in docs["documents"]) == sorted(
                [str(folder / "cats.md"), str(folder / "indexes.md"), "notes/lucene.txt"]
            )

            for mode in ("vector", "hybrid", "graph", "ppr"):
                found = _payload(await session.call_tool(f"search_{mode}", {"query": "vector indexes", "top_k": 2}))
                assert found["mode"] == mode and 1 <= len(found["results"]) <= 2
                assert found["results"][0]["source"].endswith("indexes.md")
                assert found["text"].startswith("1. ")

            bad = await session.call_tool("search_vector", {"query": "   ", "top_k": 2})
            assert _error(bad) and "InputError" in bad.content[0].text

    asyncio.run(scenario())

    from kgrag_neo4j.store import Neo4jStore

    with Neo4jStore.connect(neo4j_settings, namespace=namespace) as store:
        for d in store.list_documents():
            store.delete_document(d.id)
