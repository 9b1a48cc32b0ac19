"""Token ids of texts for a SentencePiece-style BPE tokenizer, a word at a time, remembered.

WordLlama's ``l2_supercat`` tokenizer (the Llama-2 vocabulary) has no pre-tokenizer: its
normalizer turns spaces into ``▁`` and the BPE runs over a whole chunk as one word, and that is
most of what embedding real text costs (docs/benchmarks.md).

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

    def __init__(self, tokenizer: Any, separator_id: int, specials: tuple[str, ...]) -> None:
        self._tokenizer = tokenizer
        self._separator_id = separator_id
        self._specials = ("\x00", *specials)
        self._words: dict[str, bytes] = {}

    @classmethod
    def for_tokenizer(cls, tokenizer: Any) -> WordTokens | None:
        """A ``WordTokens`` for ``tokenizer`` (an HF ``tokenizers.Tokenizer``) when tokenizing
        word by word gives exactly its ids, else None. Reads its parts, not its JSON (slow to
        write out for a vocabulary the size of Llama-2's)."""
        expected = {
            "type": "Sequence",
            "normalizers": [
                {"type": "Prepend", "prepend": SPACE},
                {"type": "Replace", "pattern": {"String": " "}, "content": SPACE},
            ],
        }
        normalizer, model = tokenizer.normalizer, tokenizer.model
        if (
            normalizer is None
            or json.loads(normalizer.__getstate__()) != expected
            or tokenizer.pre_tokenizer is not None
            or type(model).__name__ != "BPE"
            or not model.byte_fallback
            or model.dropout
            or model.continuing_subword_prefix
            or model.end_of_word_suffix
        ):
            return None
        vocab = tokenizer.get_vocab(with_added_tokens=False)
        if "<0x00>" not in vocab or max(vocab.values()) > 0xFFFF:
            return None
        if any("\x00" in token or SPACE in token.lstrip(SPACE) for token in vocab):
            return None
        added = list(tokenizer.get_added_tokens_decoder().values())
        if any(a.normalized or not a.content for a in added):
            return None  # matched in the normalized text: a search of the raw text could miss it
        return cls(tokenizer, int(vocab["<0x00>"]), tuple(a.content for a in added))

    def ids(self, texts: list[str]) -> list[bytes]:
        words = self._words
        if len(words) > MAX_WORDS:
            words = self._words = {}  # a new dict: a call in another thread keeps its own
        specials = self._specials
        split = [_WORD.findall(SPACE + t.replace(" ", SPACE)) if t and not any(s in t for s in specials) else None for t in texts]
        missing = set(itertools.chain.from_iterable(s for s in split if s)).difference(words)
        if missing and not self._learn(sorted(missing), words):
            # a separator did not come back (for_tokenizer rules it out): whole texts then
            return [self._whole(t) for t in texts]
        return [
            b"".join(map(words.__getitem__, parts)) if parts is not None else self._whole(text)
            for text, parts in zip(texts, split)
        ]

    def _encode(self, pieces: list[list[str]]) -> list[list[bytes] | None]:
        """Each piece's words' ids, or None for a piece whose separators did not come back.

        The words are normalized already; the tokenizer normalizes again what gives them back:
        each piece is sent as NUL + the words joined by NUL, with every ``▁`` a space (a space
        and a ``▁`` both become ``▁``), and its normalizer puts the first ``▁`` before the NUL.
        That leading ``▁`` (whose ids are dropped) keeps the text from being empty, which the
        normalizer would leave empty, so a word that is a lone ``▁`` comes back too."""
        raw = ["\x00" + "\x00".join(p).replace(SPACE, " ") for p in pieces]
        out: list[list[bytes] | None] = []
        for piece, enc in zip(pieces, self._tokenizer.encode_batch_fast(raw, add_special_tokens=False)):
            ids = np.asarray(enc.ids, dtype=np.uint16)
            cuts = np.flatnonzero(ids == self._separator_id)
            if len(cuts) != len(piece):
                out.append(None)
                continue
            data = ids.tobytes()
            ends = [*cuts[1:].tolist(), len(ids)]
            out.append([data[2 * (a + 1) : 2 * b] for a, b in zip(cuts.tolist(), ends)])
        return out

    def _learn(self, missing: list[str], words: dict[str, bytes]) -> bool:
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
        for piece, found in zip(pieces, self._encode(pieces)):
            if found is None:
                return False
            words.update(zip(piece, found))
        return True

    def _whole(self, text: str) -> bytes:
        return np.asarray(self._tokenizer.encode(text, add_special_tokens=False).ids, dtype=np.uint16).tobytes() if text else b""
