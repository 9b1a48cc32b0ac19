"""Several embedding models in one database (vector slots), against the real server: two
namespaces of different vector sizes each answer in every mode from their own documents, and
the slot nothing uses any more can be dropped."""

from __future__ import annotations

import json
import re

import pytest

from kgrag_neo4j.entities.pipeline import build_entities
from kgrag_neo4j.errors import ConfigurationError, DimensionMismatchError
from kgrag_neo4j.ingestion.ingestor import Ingestor
from kgrag_neo4j.options import IngestGraphOptions
from kgrag_neo4j.providers.hashing import HashingEmbedder
from kgrag_neo4j.providers.select import embedder_for_namespace
from kgrag_neo4j.retrieval.modes import MODES, search

from .conftest import TEST_DIMENSIONS

#: a size no other test uses, so this file's slot is its own
OTHER_DIMENSIONS = 96

NORTH = {
    "north.txt": "Ned Stark rules Winterfell in the north. Winterfell is cold and grey.",
    "wall.txt": "Jon Snow guards the Wall with the Night's Watch beyond Winterfell.",
}
SOUTH = {
    "reach.txt": "Olenna Tyrell schemes in Highgarden among the roses of the Reach.",
    "dorne.txt": "Oberyn Martell rides from Sunspear across the sands of Dorne.",
}


def _fill(store, embedder, texts) -> set[str]:
    ingestor = Ingestor(store, embedder, graph=IngestGraphOptions(sequence_edges=True))
    ids = {ingestor.ingest_text(text, source).document_id for source, text in texts.items()}
    build_entities(store, embedder)  # entity vectors too: the entity, local and ppr modes use them
    return ids


@pytest.fixture
def two_models(store, make_namespace, hashing_embedder):
    """``store`` on the tests' 256-dimension slot, ``other`` on a slot of its own; the slot is
    dropped afterwards (the namespaces are deleted by their fixture first: see the finaliser)."""
    other = store.with_namespace(make_namespace())
    small = HashingEmbedder(dimensions=OTHER_DIMENSIONS)
    north_ids = _fill(store, hashing_embedder, NORTH)
    south_ids = _fill(other, small, SOUTH)
    yield store, hashing_embedder, north_ids, other, small, south_ids
    other.delete_namespace()
    other.drop_unused_vector_slots()


@pytest.mark.parametrize("mode", MODES)
def test_two_namespaces_of_different_sizes_each_answer_from_their_own_documents(two_models, mode):
    store, big, north_ids, other, small, south_ids = two_models
    for ns_store, embedder, own, query in (
        (store, big, north_ids, "Winterfell Ned Stark"),
        (other, small, south_ids, "Highgarden Olenna Tyrell"),
    ):
        response = search(mode, ns_store, embedder, query, 3)
        assert response.results, (mode, ns_store.namespace)
        assert {r.document_id for r in response.results} <= own, mode


def test_each_namespace_records_its_own_model_slot_and_size(two_models):
    store, big, _, other, small, _ = two_models
    assert store.schema_status().model == big.name and store.schema_status().dimensions == TEST_DIMENSIONS
    mine = other.schema_status()
    assert (mine.model, mine.dimensions) == (small.name, OTHER_DIMENSIONS)
    assert mine.slot != store.schema_status().slot
    assert mine.ready, mine.missing
    params = other.vector_params()
    assert params["vector_property"].startswith("embedding_") and params["chunk_index"].startswith("chunk_embedding_")
    uses = {u.slot: u for u in store.vector_slots()}
    assert other.namespace in uses[mine.slot].namespaces and small.name in uses[mine.slot].models
    assert uses[mine.slot].dimensions == OTHER_DIMENSIONS


def test_a_namespace_refuses_the_other_namespaces_model(two_models):
    store, big, _, other, small, _ = two_models
    with pytest.raises(DimensionMismatchError, match=f"{OTHER_DIMENSIONS}.*{TEST_DIMENSIONS}"):
        store.check_embedder(small.name, small.dimensions)
    with pytest.raises(DimensionMismatchError):
        Ingestor(other, big).ingest_text("Ned Stark again.", "again.txt")
    with pytest.raises(DimensionMismatchError):
        other.search_chunks(big.embed(["Winterfell"])[0], 3)


def test_a_slot_in_use_is_not_dropped_and_an_unused_one_is(store, make_namespace):
    lone = store.with_namespace(make_namespace())
    embedder = HashingEmbedder(dimensions=OTHER_DIMENSIONS + 1)
    Ingestor(lone, embedder).ingest_text("A lonely text about ravens.", "raven.txt")
    slot = lone.schema_status().slot
    assert all(u.slot != slot for u in store.drop_unused_vector_slots(dry_run=True))
    lone.delete_namespace()
    dropped = store.drop_unused_vector_slots()
    assert slot in {u.slot for u in dropped}
    assert slot not in {u.slot for u in store.vector_slots()}
    names = {i["name"] for i in store.schema_status().indexes}
    assert f"chunk_embedding_{slot}" not in names and "chunk_embedding" in names  # slot 1 is in use


def test_ingest_during_a_reembed_is_refused_with_one_line(store, hashing_embedder):
    Ingestor(store, hashing_embedder).ingest_text("Ned Stark rules Winterfell.", "a.txt")
    small = HashingEmbedder(dimensions=OTHER_DIMENSIONS)
    store.begin_reembed(small.name, small.dimensions)
    try:
        with pytest.raises(ConfigurationError, match="being re-embedded"):
            Ingestor(store.with_namespace(store.namespace), hashing_embedder).ingest_text("More text.", "b.txt")
    finally:
        store.delete_namespace()
        store.drop_unused_vector_slots()


# -- re-embedding a namespace with another model --------------------------------------------------

CORPUS = {
    f"doc{i}.txt": text
    for i, text in enumerate(
        [
            "Ned Stark rules Winterfell in the north. Winterfell is cold and grey.",
            "Jon Snow guards the Wall with the Night's Watch beyond Winterfell.",
            "Olenna Tyrell schemes in Highgarden among the roses of the Reach.",
            "Oberyn Martell rides from Sunspear across the sands of Dorne.",
            "Tyrion Lannister drinks wine at Casterly Rock and reads books.",
        ]
    )
}


def _vectors(driver, namespace: str, prop: str) -> dict[str, int]:
    """How many chunks and entities of ``namespace`` hold a vector in ``prop``."""
    rows, _, _ = driver.execute_query(
        "MATCH (n) WHERE (n:Chunk OR n:Entity) AND n.namespace = $ns AND $prop IN keys(n) "
        "RETURN labels(n)[0] AS label, count(*) AS n",
        ns=namespace,
        prop=prop,
    )
    return {r["label"]: r["n"] for r in rows}


@pytest.fixture
def built(store, hashing_embedder):
    ingestor = Ingestor(store, hashing_embedder)
    for source, text in CORPUS.items():
        ingestor.ingest_text(text, source)
    build_entities(store, hashing_embedder)
    yield store
    store.delete_namespace()
    store.drop_unused_vector_slots()


def test_reembed_switches_to_the_new_model_and_answers_as_a_fresh_ingest(built, driver, make_namespace, hashing_embedder):
    from kgrag_neo4j.ingestion.reembed import reembed_namespace

    new = HashingEmbedder(dimensions=OTHER_DIMENSIONS)
    old_slot = built.vector_slot()
    counts = _vectors(driver, built.namespace, old_slot.vector_property)
    seen: list[tuple[str, int, int]] = []
    result = reembed_namespace(built, new, batch_size=2, grace=0, progress=lambda *a: seen.append(a))
    assert result.finished and result.switched and result.previous_model == hashing_embedder.name
    assert (result.chunks, result.entities) == (counts["Chunk"], counts["Entity"])
    assert built.embedding_model() == new.name and built.vector_slot() != old_slot
    # what a command or a Python caller without an embedder of its own now embeds queries with
    assert embedder_for_namespace(None, built.embedding_model()).name == new.name
    # the old vectors are gone, the new ones are all there; chunk ids did not change
    assert _vectors(driver, built.namespace, old_slot.vector_property) == {}
    assert _vectors(driver, built.namespace, built.vector_slot().vector_property) == counts
    assert {p for p, _, _ in seen} >= {"chunks", "entities"} and seen[-1][0] == "cleanup"
    # the same search as on a fresh ingest of the same texts with the new model
    fresh = built.with_namespace(make_namespace())
    ingestor = Ingestor(fresh, new)
    for source, text in CORPUS.items():
        ingestor.ingest_text(text, source)
    build_entities(fresh, new)
    for mode in ("vector", "graph", "ppr", "entity"):
        got = search(mode, built, new, "Winterfell in the north", 3).results
        want = search(mode, fresh, new, "Winterfell in the north", 3).results
        assert [(r.content, round(r.score, 6)) for r in got] == [(r.content, round(r.score, 6)) for r in want], mode
    # the old model is refused now, with one line naming both
    with pytest.raises(DimensionMismatchError, match=f"{TEST_DIMENSIONS}.*{OTHER_DIMENSIONS}"):
        built.check_embedder(hashing_embedder.name, hashing_embedder.dimensions)
    fresh.delete_namespace()


def test_an_interrupted_reembed_keeps_the_old_model_answering_and_resumes(built, hashing_embedder):
    from kgrag_neo4j.ingestion.reembed import reembed_namespace

    new = HashingEmbedder(dimensions=OTHER_DIMENSIONS)
    before = [r.id for r in search("vector", built, hashing_embedder, "Tyrion wine", 5).results]
    stopped = reembed_namespace(built, new, batch_size=2, grace=0, stop_after_batches=2)
    assert not stopped.finished and not stopped.switched and stopped.chunks == 4
    # searches still read the old model's vectors, all of them
    assert built.embedding_model() == hashing_embedder.name
    assert [r.id for r in search("vector", built, hashing_embedder, "Tyrion wine", 5).results] == before
    with pytest.raises(ConfigurationError, match="being re-embedded"):
        Ingestor(built.with_namespace(built.namespace), hashing_embedder).ingest_text("More.", "more.txt")
    # another model cannot take over the half-done re-embed
    with pytest.raises(ConfigurationError, match="being re-embedded"):
        reembed_namespace(built, HashingEmbedder(dimensions=OTHER_DIMENSIONS + 2), grace=0)
    done = Ingestor(built, new).reembed(batch_size=2, grace=0)  # the same run, through the Ingestor
    assert done.finished and done.switched
    assert done.chunks == len(CORPUS) - 4  # only what the first run had not embedded
    assert built.embedding_model() == new.name
    assert {r.id for r in search("vector", built, new, "Tyrion wine", 5).results} == set(before)
    again = reembed_namespace(built, new, grace=0)  # nothing left: a no-op
    assert again.finished and (again.chunks, again.entities, again.removed) == (0, 0, 0)


def test_a_search_between_switch_and_cleanup_reads_the_new_model_only(built, driver, hashing_embedder):
    new = HashingEmbedder(dimensions=OTHER_DIMENSIONS)
    state = built.begin_reembed(new.name, new.dimensions)
    for kind in ("chunk", "entity"):
        rows = built.reembed_pending(state, kind, limit=1000)
        texts = [r["text"] if kind == "chunk" else r["name"] for r in rows]
        built.write_reembedded(state, kind, [{"id": r["id"], "embedding": v} for r, v in zip(rows, new.embed(texts))])
    built.wait_for_schema()
    assert built.switch_reembed(state)["switched"] == 1
    reader = built.with_namespace(built.namespace)  # a fresh reader, as a new `kgrag search` is
    assert reader.embedding_model() == new.name
    assert len(search("vector", reader, new, "Winterfell", 5).results) == 5
    assert _vectors(driver, built.namespace, "embedding")["Chunk"] == len(CORPUS)  # old ones still there
    while built.clear_old_vectors(state, batch_size=2):
        pass
    assert _vectors(driver, built.namespace, "embedding") == {}
    assert built.vector_slots()  # the old slot is still listed: the foreign namespace uses slot 1


def test_same_size_model_reembeds_into_another_slot(built, driver):
    from kgrag_neo4j.ingestion.reembed import reembed_namespace

    new = HashingEmbedder(dimensions=TEST_DIMENSIONS)
    new.name = "another-model-256"  # same size, another model: the vectors cannot share a slot
    slot = built.vector_slot()
    result = reembed_namespace(built, new, grace=0)
    assert result.finished and built.embedding_model() == new.name
    assert built.vector_slot() != slot and built.schema_status().dimensions == TEST_DIMENSIONS
    assert search("vector", built, new, "Winterfell", 2).results


def test_cli_reembed_then_search_without_embedder_uses_the_recorded_model(kgrag_cli, store, tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    for source, text in CORPUS.items():
        (folder / source).write_text(text)
    ns = store.namespace
    try:
        assert kgrag_cli("ingest", str(folder), "--namespace", ns, "--embedder", "hashing", "--json").exit_code == 0
        result = kgrag_cli("namespace", "reembed", ns, "--embedder", "wordllama", "--grace", "0", "--json")
        assert result.exit_code == 0, result.stderr
        report = json.loads(result.stdout)
        assert report["finished"] and report["model"].startswith("wordllama") and report["chunks"] == len(CORPUS)
        # no --embedder: the namespace's model now (wordllama), in every mode that embeds the query
        for mode in ("vector", "graph", "ppr"):
            found = kgrag_cli("search", "Tyrion drinks wine", "--namespace", ns, "--mode", mode, "--json")
            assert found.exit_code == 0, found.stderr
            assert "wordllama" in found.stderr or json.loads(found.stdout)["results"], mode
            assert any("Tyrion" in r["content"] for r in json.loads(found.stdout)["results"]), mode
        refused = kgrag_cli("search", "Tyrion", "--namespace", ns, "--embedder", "hashing")
        assert refused.exit_code == 1 and "wordllama" in refused.stderr and "Traceback" not in refused.stderr
        params = kgrag_cli("cypher", "params", "chunks/search_vector", "--namespace", ns, "--query", "Tyrion")
        slot = store.with_namespace(ns).vector_slot()
        assert (
            f"chunk_index: '{slot.chunk_index}'" in params.stdout
            and f"vector_property: '{slot.vector_property}'" in params.stdout
        )
        status = kgrag_cli("schema", "status", "--namespace", ns)
        assert re.search(
            rf"slot {slot.number}: 256 dimensions, {slot.chunk_index} \+ {slot.entity_index} \[.*wordllama.*\]: .*{ns}",
            status.stdout,
        ), status.stdout
        refused = kgrag_cli("namespace", "reembed", "no-such-namespace-x", "--embedder", "hashing")
        assert refused.exit_code == 1 and "records no embedding model" in refused.stderr
    finally:
        store.delete_namespace()
        dropped = kgrag_cli("schema", "drop-unused", "--json")
        assert dropped.exit_code == 0, dropped.stderr


# -- WordLlama and all-MiniLM-L6-v2 (numpy, providers/minilm.py) side by side ---------------------

NORTH_FILES = [
    "Ned Stark rules Winterfell from the great hall, where the banners of the direwolf hang.",
    "Winterfell stands on hot springs; the water runs through the walls of the castle to keep it warm.",
    "The godswood of Winterfell holds a weirwood tree with a carved face that weeps red sap.",
    "Jon Snow leaves Winterfell to join the Night's Watch at Castle Black on the Wall.",
    "The Wall is a fortification of ice seven hundred feet high that guards the realm from the north.",
    "Rangers of the Night's Watch patrol the haunted forest beyond the Wall in black cloaks.",
    "Bran Stark climbs the towers of Winterfell and falls from the broken tower.",
    "Maester Luwin teaches the Stark children letters, sums and the history of the north.",
    "The crypts beneath Winterfell hold stone statues of the Kings of Winter with iron swords.",
    "Arya Stark trains with a thin sword called Needle, a gift from her brother Jon.",
    "Robb Stark calls the banners of the north and marches south with twenty thousand men.",
    "Snow falls on the Kingsroad as the riders of House Stark travel north to the Wall.",
]
SEA_FILES = [
    "Coral reefs grow in warm shallow seas where sunlight reaches the polyps that build them.",
    "Sea turtles return to the beach where they hatched to lay their own eggs in the sand.",
    "Blue whales feed on krill, swallowing tons of tiny crustaceans every day in cold water.",
    "The octopus changes the colour of its skin in a fraction of a second to hide from predators.",
    "Kelp forests along rocky coasts shelter sea otters, which crack shellfish on their bellies.",
    "Deep sea anglerfish carry a glowing lure to draw prey towards their jaws in the dark.",
    "Tides rise and fall twice a day as the moon's gravity pulls on the oceans of the earth.",
    "Mangrove roots trap silt and protect coastlines from storm surges and erosion.",
    "Jellyfish drift with the currents and sting small fish with their trailing tentacles.",
    "Salmon swim upstream from the sea to spawn in the rivers where they were born.",
    "Dolphins hunt in groups and call to each other with clicks and whistles under water.",
    "Plankton blooms colour the sea green in spring when nutrients rise from the depths.",
]
MINILM = "sentence-transformers-all-MiniLM-L6-v2-384"


def _folder(root, name: str, texts: list[str]):
    folder = root / name
    folder.mkdir()
    for i, text in enumerate(texts):
        (folder / f"{name}{i:02d}.txt").write_text(text)
    return folder


def _search(kgrag_cli, query: str, ns: str, mode: str, *extra: str, top_k: int = 4) -> list[dict]:
    found = kgrag_cli("search", query, "--namespace", ns, "--mode", mode, "--top-k", str(top_k), "--json", *extra)
    assert found.exit_code == 0, (mode, found.stderr)
    return json.loads(found.stdout)["results"]


def _drop(kgrag_cli, store, *namespaces: str) -> None:
    """The namespaces deleted now (not at teardown), so the MiniLM slot is unused when dropped."""
    for ns in namespaces:
        store.with_namespace(ns).delete_namespace()
    dropped = kgrag_cli("schema", "drop-unused", "--json")
    assert dropped.exit_code == 0, dropped.stderr


def test_a_wordllama_and_a_minilm_namespace_each_answer_from_their_own_documents(kgrag_cli, store, make_namespace, tmp_path):
    north, sea = make_namespace("wl"), make_namespace("ml")
    try:
        for ns, folder, embedder in (
            (north, _folder(tmp_path, "north", NORTH_FILES), "wordllama"),
            (sea, _folder(tmp_path, "sea", SEA_FILES), "minilm"),
        ):
            done = kgrag_cli("ingest", str(folder), "--namespace", ns, "--embedder", embedder, "--json")
            assert done.exit_code == 0, done.stderr
        assert store.with_namespace(north).embedding_model().startswith("wordllama-")
        assert store.with_namespace(sea).embedding_model() == MINILM
        assert store.with_namespace(north).vector_slot() != store.with_namespace(sea).vector_slot()
        for mode in ("vector", "graph", "ppr"):
            # no --embedder: each namespace's recorded model embeds the query
            walls = _search(kgrag_cli, "the ice wall that guards the north", north, mode)
            whales = _search(kgrag_cli, "what do whales eat?", sea, mode)
            assert walls and whales, mode
            assert all(r["content"] in NORTH_FILES for r in walls), mode
            assert all(r["content"] in SEA_FILES for r in whales), mode
            assert "ice seven hundred feet" in walls[0]["content"], (mode, walls[0])
            assert "krill" in whales[0]["content"], (mode, whales[0])
        # and each refuses the other's model, in one line
        refused = kgrag_cli("search", "whales", "--namespace", sea, "--embedder", "wordllama")
        assert refused.exit_code == 1 and "384" in refused.stderr and "Traceback" not in refused.stderr
    finally:
        _drop(kgrag_cli, store, north, sea)


def test_reembed_to_minilm_answers_as_a_fresh_minilm_ingest(kgrag_cli, store, make_namespace, tmp_path):
    moved, fresh = make_namespace("re"), make_namespace("fr")
    folder = _folder(tmp_path, "mixed", NORTH_FILES + SEA_FILES)
    try:
        assert kgrag_cli("ingest", str(folder), "--namespace", moved, "--embedder", "wordllama", "--json").exit_code == 0
        before = {r["id"] for r in _search(kgrag_cli, "whales eat krill", moved, "vector")}
        result = kgrag_cli("namespace", "reembed", moved, "--embedder", "minilm", "--grace", "0", "--json")
        assert result.exit_code == 0, result.stderr
        report = json.loads(result.stdout)
        assert report["finished"] and report["model"] == MINILM and report["chunks"] == len(NORTH_FILES + SEA_FILES)
        assert store.with_namespace(moved).embedding_model() == MINILM
        done = kgrag_cli("ingest", str(folder), "--namespace", fresh, "--embedder", "minilm", "--json")
        assert done.exit_code == 0, done.stderr
        for query in ("whales eat krill", "the ice wall that guards the north", "a castle warmed by hot springs"):
            for mode in ("vector", "graph", "ppr"):
                got = _search(kgrag_cli, query, moved, mode, "--embedder", "minilm")
                want = _search(kgrag_cli, query, fresh, mode, "--embedder", "minilm")
                assert got, (query, mode)
                # chunk ids embed the namespace: the same chunks are the same document and text
                assert [(r["content"], round(r["score"], 4)) for r in got] == [
                    (r["content"], round(r["score"], 4)) for r in want
                ], (query, mode)
        # the chunk ids did not change in the re-embed
        after = {r["id"] for r in _search(kgrag_cli, "whales eat krill", moved, "vector", top_k=24)}
        assert before <= after
    finally:
        _drop(kgrag_cli, store, moved, fresh)
