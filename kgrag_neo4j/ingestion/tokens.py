"""Token approximation shared by the chunkers and the store.

A token is approximated as four characters. A tokenizer would be more exact, but it
would tie chunk sizes to one model's vocabulary; four characters is close enough for the
English-heavy text this library targets and costs nothing. Measured against the
``tokenizers`` package with WordLlama's own tokenizer (``python -m bench libraries``;
docs/benchmarks.md), the estimate is close to the real count and encoding costs orders of
magnitude more than ``len``; so the estimate stays.
"""

from __future__ import annotations

__all__ = ["CHARS_PER_TOKEN", "estimate_tokens", "tokens_to_chars"]

CHARS_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    """Approximate token count of ``text``: characters / 4, rounded up (so ``"a"`` is 1)."""
    return -(-len(text) // CHARS_PER_TOKEN)


def tokens_to_chars(tokens: int) -> int:
    """The most characters whose estimate is still at most ``tokens``."""
    return tokens * CHARS_PER_TOKEN
