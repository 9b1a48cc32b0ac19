"""WordLlama's tokenizer, a word at a time (providers/_word_tokens.py), gives exactly the ids
of the tokenizer run on whole texts: on generated text with the characters that could break
it (runs of spaces, ``▁`` typed by the user, NUL, special tokens' text, newlines, non-Latin
scripts, emoji) and on a second call, when every word comes from memory."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgrag_neo4j.providers import _word_tokens
from kgrag_neo4j.providers._word_tokens import WordTokens


@pytest.fixture(scope="module")
def tokenizer():
    from kgrag_neo4j.providers import wordllama

    wordllama.WordLlamaEmbedder().load()
    return wordllama._pooler("l2_supercat", 256).tokenizer


@pytest.fixture(scope="module")
def shared_words(tokenizer):
    """One memory of words for every generated example (building one reads the vocabulary)."""
    words = WordTokens.for_tokenizer(tokenizer)
    assert words is not None
    return words


def _whole(tokenizer, texts):
    return [e.ids for e in tokenizer.encode_batch(texts, add_special_tokens=False)]


def _words(words, texts):
    return [np.frombuffer(b, dtype=np.uint16).tolist() for b in words.ids(texts)]


PIECES = st.sampled_from(
    [
        " ",
        "  ",
        "   ",
        "\u2581",
        "\x00",
        "\n",
        "\n\n",
        "\t",
        "</s>",
        "<s>",
        "<unk>",
        "<",
        "s>",
        "é",
        "中文",
        "😀",
        "\u00a0",
        "def",
        "__init__",
        "x",
        "-",
        "the",
        "ls(1)",
        "0x1F",
    ]
)
TEXT = st.lists(st.one_of(PIECES, st.text(max_size=12)), max_size=40).map("".join)


@settings(max_examples=300, deadline=None)
@given(texts=st.lists(TEXT, min_size=1, max_size=12))
def test_word_by_word_gives_the_whole_texts_ids(tokenizer, shared_words, texts):
    expected = _whole(tokenizer, texts)
    assert _words(shared_words, texts) == expected
    assert _words(shared_words, texts) == expected  # every word from memory now


def test_many_new_words_in_one_call_and_a_full_memory(tokenizer, monkeypatch):
    monkeypatch.setattr(_word_tokens, "MAX_WORDS", 50)
    words = WordTokens.for_tokenizer(tokenizer)
    rng = np.random.default_rng(7)
    vocab = ["alpha", "beta", "gamma", "--flag", "path/to/file.txt", "naïve", "Ωmega", "x" * 300, "  ", "\u2581\u2581"]
    texts = [" ".join(rng.choice(vocab, size=30).tolist()) + f" word{i} w{i}x" for i in range(200)]
    for _ in range(3):  # the memory fills past MAX_WORDS and starts again
        assert _words(words, texts) == _whole(tokenizer, texts)
    assert words.ids([""]) == [b""]


def _edited(tokenizer, **changes):
    from tokenizers import Tokenizer

    config = json.loads(tokenizer.to_str())
    for path, value in changes.items():
        node = config
        *parents, leaf = path.split("__")
        for key in parents:
            node = node[key]
        node[leaf] = value
    return Tokenizer.from_str(json.dumps(config))


@pytest.mark.parametrize(
    "changes",
    [
        {"pre_tokenizer": {"type": "Whitespace"}},
        {"normalizer": None},
        {"model__byte_fallback": False},
        {"model__dropout": 0.1},
    ],
    ids=["a pre-tokenizer", "no normalizer", "no byte fallback", "BPE dropout"],
)
def test_another_kind_of_tokenizer_is_tokenized_whole(tokenizer, changes):
    assert WordTokens.for_tokenizer(_edited(tokenizer, **changes)) is None


def test_a_vocabulary_with_a_token_across_words_is_tokenized_whole(tokenizer):
    from tokenizers import Tokenizer

    config = json.loads(tokenizer.to_str())
    config["model"]["vocab"]["a\u2581b"] = len(config["model"]["vocab"])
    assert WordTokens.for_tokenizer(Tokenizer.from_str(json.dumps(config))) is None


def test_separators_that_do_not_come_back_mean_whole_texts(tokenizer):
    words = WordTokens.for_tokenizer(tokenizer)
    words._separator_id = 4  # a byte token the words do not hold: no piece splits as sent
    texts = ["the river mill", "  two  spaces", ""]
    assert _words(words, texts) == _whole(tokenizer, texts)
    assert words._words == {}  # nothing half-learned was kept
