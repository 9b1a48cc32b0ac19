"""Token ids of texts for a SentencePiece-style BPE tokenizer, a word at a time, remembered.

WordLlama's ``l2_supercat`` tokenizer (the Llama-2 vocabulary) has no pre-tokenizer: its
normalizer turns spaces into ``▁`` and the BPE runs over a whole chunk as one word, 0.3 us per
character, 85% of what embedding real text costs (22 CPU-s per 100,000 chunks of 128 tokens).

No token of that vocabulary holds a ``▁`` after another character, so no merge ever joins
the end of one word (a run of ``▁`` and what follows up to the next ``▁``) to the next: the
ids of a text are the ids of its words in order. Words repeat, so each is tokenized once and
kept (as uint16 bytes, joined per text in one C call). The words not seen yet are tokenized in
pieces of about ``PIECE`` characters, each word separated by NUL, whose byte token no merge
touches either. A text that holds NUL or a special token's text (``</s>``: the tokenizer cuts
the text there and puts a ``▁`` before each part) goes to the tokenizer whole.

``WordTokens.for_tokenizer`` checks each of those properties on the tokenizer it is given and
answers None for any other (the caller then tokenizes whole texts, as before).
tests/test_word_tokens.py compares both ways on generated text.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

import numpy as np

__all__ = ["WordTokens"]

SPACE = "\u2581"  # ▁
_WORD = re.compile(f"{SPACE}*[^{SPACE}]+|{SPACE}+")
#: characters of not-yet-seen words per piece given to the tokenizer
PIECE = 256
#: words kept; past it the memory starts again (about 60 MB)
MAX_WORDS = 1 << 18


class WordTokens:
    """``ids(texts)``: each text's token ids as native uint16 bytes."""

    def __init__(self, whole: Any, bare: Any, separator_id: int, specials: tuple[str, ...]) -> None:
        self._whole = whole  # the tokenizer as configured: for the texts words cannot do
        self._bare = bare  # the same without its normalizer: for words already normalized
        self._separator_id = separator_id
        self._specials = ("\x00", *specials)
        self._words: dict[str, bytes] = {}

    @classmethod
    def for_tokenizer(cls, tokenizer: Any) -> WordTokens | None:
        """A ``WordTokens`` for ``tokenizer`` (an HF ``tokenizers.Tokenizer``) when tokenizing
        word by word gives exactly its ids, else None."""
        from tokenizers import Tokenizer

        config = json.loads(tokenizer.to_str())
        model = config.get("model") or {}
        vocab = model.get("vocab")
        expected = {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": SPACE},
            {"type": "Replace", "pattern": {"String": " "}, "content": SPACE},
        ]}
        if (config.get("normalizer") != expected or config.get("pre_tokenizer") is not None
                or model.get("type") != "BPE" or not model.get("byte_fallback") or model.get("dropout")
                or model.get("continuing_subword_prefix") or model.get("end_of_word_suffix")
                or not isinstance(vocab, dict) or "<0x00>" not in vocab or max(vocab.values()) > 0xFFFF):
            return None
        added = config.get("added_tokens") or []
        if any(a.get("normalized") or not a.get("content") for a in added):
            return None  # matched in the normalized text: a search of the raw text could miss it
        if any(re.search(f"[^{SPACE}]{SPACE}", token) or "\x00" in token for token in vocab):
            return None
        bare = Tokenizer.from_str(tokenizer.to_str())
        bare.normalizer = None
        return cls(tokenizer, bare, int(vocab["<0x00>"]), tuple(a["content"] for a in added))

    def ids(self, texts: list[str]) -> list[bytes]:
        words = self._words
        if len(words) > MAX_WORDS:
            words = self._words = {}  # a new dict: a call in another thread keeps its own
        specials = self._specials
        split = [_WORD.findall(SPACE + t.replace(" ", SPACE)) if t and not any(s in t for s in specials) else None
                 for t in texts]
        missing = set(itertools.chain.from_iterable(s for s in split if s)).difference(words)
        if missing:
            self._learn(sorted(missing), words)
        out = []
        for text, parts in zip(texts, split):
            if parts is not None:
                out.append(b"".join(map(words.__getitem__, parts)))
            elif text:
                out.append(np.asarray(self._whole.encode(text, add_special_tokens=False).ids, dtype=np.uint16).tobytes())
            else:
                out.append(b"")
        return out

    def _learn(self, missing: list[str], words: dict[str, bytes]) -> None:
        pieces: list[list[str]] = []
        current: list[str] = []
        size = 0
        for w in missing:
            current.append(w)
            size += len(w)
            if size >= PIECE:
                pieces.append(current)
                current, size = [], 0
        if current:
            pieces.append(current)
        encoded = self._bare.encode_batch_fast(["\x00".join(p) for p in pieces], add_special_tokens=False)
        for piece, enc in zip(pieces, encoded):
            ids = np.asarray(enc.ids, dtype=np.uint16)
            cuts = np.flatnonzero(ids == self._separator_id)
            if len(cuts) != len(piece) - 1:  # excluded by for_tokenizer; one word at a time then
                for w, one in zip(piece, self._bare.encode_batch_fast(piece, add_special_tokens=False)):
                    words[w] = np.asarray(one.ids, dtype=np.uint16).tobytes()
                continue
            data = ids.tobytes()
            starts = [0, *(cuts + 1).tolist()]
            ends = [*cuts.tolist(), len(ids)]
            for w, a, b in zip(piece, starts, ends):
                words[w] = data[2 * a : 2 * b]
