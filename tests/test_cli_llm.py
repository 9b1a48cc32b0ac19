"""The LLM features from the CLI (ask, entities/communities build --llm, ingest
--extract-graph --llm) against the real server, with the real openai SDK talking over HTTP to
a fake OpenAI-compatible server on 127.0.0.1; and ``kgrag triples add``."""

from __future__ import annotations

import json

import pytest

from .openai_fake import LocalOpenAIServer, scripted_reply
from .test_cli import kgrag  # noqa: F401 - the fixture

DOCS = {
    "indexes.md": "Neo4j creates vector indexes with CREATE VECTOR INDEX. Lucene serves the full-text indexes.",
    "people.md": "Alice works for Acme in Paris. Acme builds tools on Neo4j.",
}


@pytest.fixture
def llm(monkeypatch):
    """OPENAI_BASE_URL points at the fake; no Cohere key can take precedence."""
    with LocalOpenAIServer() as server:
        server.fake.reply = scripted_reply
        for name in ("CO_API_KEY", "COHERE_API_KEY", "OPENAI_API_KEY", "KGRAG_LLM"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_MODEL", "scripted-1")
        yield server


@pytest.fixture
def ingested(kgrag, namespace, tmp_path):  # noqa: F811
    for name, text in DOCS.items():
        (tmp_path / name).write_text(text)
    code, out, err = kgrag("ingest", str(tmp_path), "--namespace", namespace, "--embedder", "hashing", "--json")
    assert code == 0, err
    yield namespace
    kgrag("docs", "delete", *[f["document_id"] for f in json.loads(out)["files"]], "--namespace", namespace)


def test_ask_answers_with_citations_in_json_text_and_stream(kgrag, ingested, llm):  # noqa: F811
    question = "How are vector indexes created?"
    common = ("--namespace", ingested, "--embedder", "hashing", "--llm", "openai")
    code, out, err = kgrag("ask", question, *common, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["answer"] == "Neo4j creates vector indexes with CREATE VECTOR INDEX [1]."
    assert data["model"] == "scripted-1" and data["mode"] == "hybrid" and data["namespace"] == ingested
    first = data["citations"][0]
    assert first["cited"] and first["number"] == 1 and first["chunk_id"] == data["results"][0]["id"]
    assert first["source"].endswith(".md") and not any(c["cited"] for c in data["citations"][1:])
    prompt = llm.fake.bodies("/v1/chat/completions")[0]["messages"][1]["content"]
    assert "[1] (" in prompt and question in prompt and data["results"][0]["content"] in prompt
    assert "chat model: scripted-1" in err

    code, out, _ = kgrag("ask", question, *common, "--mode", "graph")
    assert code == 0 and out.startswith("Neo4j creates vector indexes") and "Sources:\n  [1] " in out

    code, out, _ = kgrag("ask", question, *common, "--stream", "--mode", "vector")
    assert code == 0 and "Neo4j creates vector indexes with CREATE VECTOR INDEX [1]." in out and "Sources:" in out
    assert llm.fake.bodies("/v1/chat/completions")[-1]["stream"] is True

    code, _, err = kgrag("ask", question, *common, "--stream", "--json")
    assert code == 1 and "--stream and --json" in err


def test_ask_without_a_chat_model_says_how_to_configure_one(kgrag, ingested, monkeypatch):  # noqa: F811
    for name in ("CO_API_KEY", "COHERE_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "KGRAG_LLM"):
        monkeypatch.delenv(name, raising=False)
    code, out, err = kgrag("ask", "anything?", "--namespace", ingested, "--embedder", "hashing")
    assert code == 1 and out == ""
    assert "no chat model configured" in err and "CO_API_KEY" in err and "OPENAI_BASE_URL" in err
    assert "Traceback" not in err


def test_entities_build_with_the_users_types(kgrag, ingested, llm, tmp_path):  # noqa: F811
    code, out, err = kgrag(
        "entities", "build", "--namespace", ingested, "--embedder", "hashing", "--llm", "openai",
        "--entity-types", "person,COMPANY", "--relation-types", "works for", "--json",
    )  # fmt: skip
    assert code == 0, err
    result = json.loads(out)
    assert result["dropped"]["unknown_entity_type"] >= 3  # Neo4j, Lucene, Paris, ... are not asked for
    assert result["dropped"]["unknown_relation_type"] >= 1
    code, out, _ = kgrag("entities", "list", "--namespace", ingested, "--json")
    found = {(e["name"], e["type"]) for e in json.loads(out)}
    # the entity model's aliases apply to declared types too: COMPANY is stored as ORGANIZATION
    assert found == {("Alice", "PERSON"), ("Acme", "ORGANIZATION")}
    code, out, _ = kgrag("entities", "show", "Alice", "--namespace", ingested, "--json")
    assert [(r["type"], r["other"]) for r in json.loads(out)[0]["relations"]] == [("WORKS_FOR", "Acme")]
    body = llm.fake.bodies("/v1/chat/completions")[0]
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["entities"]["items"]["properties"]["type"]["enum"] == ["PERSON", "COMPANY"]
    assert "exactly one of PERSON, COMPANY" in body["messages"][0]["content"]

    schema_file = tmp_path / "schema.json"
    schema_file.write_text(json.dumps({"entity_types": {"CITY": "a city"}, "relation_types": ["RELATED"]}))
    code, out, err = kgrag(
        "entities",
        "build",
        "--namespace",
        ingested,
        "--embedder",
        "hashing",
        "--llm",
        "openai",
        "--schema",
        str(schema_file),
        "--json",
    )
    assert code == 0, err
    code, out, _ = kgrag("entities", "list", "--namespace", ingested, "--json")
    assert ("Paris", "CITY") in {(e["name"], e["type"]) for e in json.loads(out)}
    assert "CITY (a city)" in llm.fake.bodies("/v1/chat/completions")[-1]["messages"][0]["content"]


def test_llm_options_are_refused_where_they_cannot_apply(kgrag, ingested, tmp_path):  # noqa: F811
    code, _, err = kgrag("entities", "build", "--namespace", ingested, "--embedder", "hashing", "--entity-types", "PERSON")
    assert code == 1 and "need --llm" in err
    bad = tmp_path / "bad.json"
    bad.write_text('{"entity_type": ["PERSON"]}')
    code, _, err = kgrag(
        "entities", "build", "--namespace", ingested, "--embedder", "hashing", "--llm", "openai", "--schema", str(bad)
    )
    assert code == 1 and "entity_types and/or relation_types" in err
    names = tmp_path / "names.txt"
    names.write_text("Acme\n")
    for offline_only in (("--names", str(names)), ("--no-titles",)):
        code, _, err = kgrag(
            "entities", "build", "--namespace", ingested, "--embedder", "hashing", "--llm", "openai", *offline_only
        )
        assert code == 1 and "for the offline extractor" in err, offline_only
    code, _, err = kgrag("ingest", str(tmp_path), "--namespace", ingested, "--embedder", "hashing", "--llm", "openai")
    assert code != 0 and "add --extract-graph" in err


def test_communities_build_with_model_reports(kgrag, ingested, llm):  # noqa: F811
    code, _, err = kgrag("entities", "build", "--namespace", ingested, "--embedder", "hashing", "--llm", "openai")
    assert code == 0, err
    code, out, err = kgrag("communities", "build", "--namespace", ingested, "--llm", "openai", "--levels", "1", "--json")
    assert code == 0, err
    summary = json.loads(out)
    assert summary["reports"] == "llm" and summary["communities"] >= 1
    code, out, _ = kgrag("communities", "list", "--namespace", ingested, "--json")
    titles = [c["title"] for c in json.loads(out)]
    assert titles and all(t.startswith("The ") and t.endswith(" community") for t in titles)


def test_ingest_extract_graph_with_the_openai_model(kgrag, namespace, llm, tmp_path):  # noqa: F811
    (tmp_path / "long.md").write_text("\n\n".join(f"Paragraph {i} about Neo4j indexes. " * 40 for i in range(4)))
    code, out, err = kgrag(
        "ingest", str(tmp_path), "--namespace", namespace, "--embedder", "hashing", "--extract-graph", "--llm", "openai", "--json"
    )
    assert code == 0, err
    row = json.loads(out)["files"][0]
    assert row["chunks"] >= 2 and row["edges"] >= row["chunks"] - 1
    assert any("knowledge graph over text chunks" in b["messages"][0]["content"] for b in llm.fake.bodies("/v1/chat/completions"))
    kgrag("docs", "delete", row["document_id"], "--namespace", namespace)


def test_graph_add_triples_with_declared_predicates(kgrag, namespace, tmp_path):  # noqa: F811
    code, out, err = kgrag(
        "triples",
        "add",
        "error:timeout",
        "resolved_by",
        "fix:pool size",
        "--meta",
        "session=s1",
        "--namespace",
        namespace,
        "--json",
    )
    assert code == 0, err and json.loads(out)["added"] == 1
    code, _, err = kgrag("triples", "add", "Alice", "mentors", "Bob", "--namespace", namespace)
    assert code == 1 and "unknown predicate 'mentors'" in err
    code, out, _ = kgrag("triples", "add", "Alice", "mentors", "Bob", "--predicate", "mentors", "--namespace", namespace)
    assert code == 0 and "added 1 triple " in out

    lines = tmp_path / "triples.txt"
    lines.write_text("Bob|mentors|Carol\nCarol|caused_by|Dave\nnot a triple\n")
    code, _, err = kgrag("triples", "add", "--file", str(lines), "--predicate", "mentors", "--namespace", namespace)
    assert code == 1 and "1 bad line(s), nothing added" in err
    lines.write_text("Bob|mentors|Carol\nCarol|caused_by|Dave\n")
    code, out, _ = kgrag("triples", "add", "--file", str(lines), "--predicate", "mentors", "--namespace", namespace, "--json")
    assert json.loads(out)["added"] == 2
    found = []
    for subject in ("Alice", "Bob", "Carol"):
        code, out, _ = kgrag("triples", "query", "--subject", subject, "--namespace", namespace, "--json")
        found += [(t["subject"], t["predicate"], t["object"]) for t in json.loads(out)]
    assert sorted(found) == [("Alice", "mentors", "Bob"), ("Bob", "mentors", "Carol"), ("Carol", "caused_by", "Dave")]
    code, out, _ = kgrag("triples", "query", "--subject", "error:timeout", "--namespace", namespace, "--json")
    assert json.loads(out)[0]["metadata"]["session"] == "s1"
    kgrag("triples", "clear", "--force", "--namespace", namespace)


def test_entities_build_llm_sends_only_new_chunks_to_the_model(kgrag, ingested, llm, tmp_path):  # noqa: F811
    base = ("entities", "build", "--namespace", ingested, "--embedder", "hashing", "--llm", "openai", "--json")

    def sent() -> list[str]:
        """Every chunk text the model was sent so far."""
        return [b["messages"][1]["content"] for b in llm.fake.bodies("/v1/chat/completions")]

    code, out, err = kgrag(*base)
    assert code == 0, err
    first = json.loads(out)
    assert first["chunks"] == 2 and first["entities"] >= 3
    calls = len(sent())

    code, out, err = kgrag(*base)  # nothing new: the model is not asked
    assert code == 0, err
    assert json.loads(out)["chunks"] == 0 and len(sent()) == calls
    code, out, _ = kgrag("entities", "list", "--namespace", ingested, "--json")
    assert {"Alice", "Acme"} <= {e["name"] for e in json.loads(out)}  # what the first build found stays

    new = tmp_path / "new"
    new.mkdir()
    (new / "bob.md").write_text("Bob works for Initech in Berlin.")
    code, out, err = kgrag("ingest", str(new), "--namespace", ingested, "--embedder", "hashing", "--json")
    assert code == 0, err
    code, out, err = kgrag(*base)
    assert code == 0, err
    assert json.loads(out)["chunks"] == 1
    later = sent()[calls:]
    assert later and all("Bob works for Initech" in m and "Alice works for Acme" not in m for m in later)

    code, out, err = kgrag(*base, "--reextract")  # every chunk again
    assert code == 0, err
    assert json.loads(out)["chunks"] == 3
    code, _, err = kgrag("entities", "build", "--namespace", ingested, "--embedder", "hashing", "--reextract")
    assert code == 1 and "--reextract is for --llm" in err
    kgrag("docs", "delete", str(new / "bob.md"), "--namespace", ingested)
