"""Rerankers: the last, optional stage of a retriever.

- ``ScoreReranker``: no external call; drops results under a minimum score and re-sorts.
- ``LLMReranker``: asks a ``ChatProvider`` for a 0-10 relevance rating per result; the score
  becomes ``rating / 10``. Any failure of the model (an exception, text that is not the JSON
  asked for, a wrong number of ratings) leaves the results as they came, with a WARNING.
- ``CohereReranker`` (Cohere's rerank endpoint) is a provider: it lives in
  :mod:`kgrag_neo4j.providers.cohere`, and ``providers.select.select_reranker`` builds any of
  them by name; this module imports no provider.

Every ``rerank(query, results, top_k)`` returns at most ``top_k`` results, best first, ties
kept in their incoming order; the incoming results are never modified.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..errors import ConfigurationError, InputError, ProviderResponseError
from ..protocols import ChatProvider
from ..types import RetrievalResult
from ..validation import check_int, check_number

__all__ = ["LLMReranker", "ScoreReranker", "parse_ratings"]

logger = logging.getLogger(__name__)


def _check_top_k(top_k: int) -> None:
    check_int(top_k, "top_k", minimum=1, error=InputError)


def _sorted_by_score(results: Sequence[RetrievalResult]) -> list[RetrievalResult]:
    # sorted() is stable, so equal scores keep their incoming order.
    return sorted(results, key=lambda r: -r.score)


class ScoreReranker:
    """Keep results whose ``score`` is at least ``min_score``, sorted by score, top ``top_k``."""

    def __init__(self, min_score: float) -> None:
        self.min_score = check_number(min_score, "min_score")

    def __repr__(self) -> str:
        return f"ScoreReranker({self.min_score!r})"

    def rerank(self, query: str, results: Sequence[RetrievalResult], top_k: int) -> list[RetrievalResult]:
        _check_top_k(top_k)
        return _sorted_by_score([r for r in results if r.score >= self.min_score])[:top_k]


_SYSTEM_PROMPT = (
    "You judge how relevant passages are to a search query. Rate every passage from 0 "
    "(unrelated) to 10 (answers the query directly). Reply with JSON only, in the form "
    '{"scores": [s1, s2, ...]}: one number per passage, in the order given.'
)

RATINGS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"scores": {"type": "array", "items": {"type": "number"}}},
    "required": ["scores"],
}


def parse_ratings(text: str, expected: int) -> list[float]:
    """The ``expected`` ratings in ``text`` (``{"scores": [...]}`` or a bare list, in a Markdown
    fence or a sentence or neither), each a number in 0..10. ``ProviderResponseError`` says
    what is wrong otherwise."""
    from ..replies import RatingsReply, parse_reply  # Why here: pydantic is slow to import; only replies need it

    ratings = list(parse_reply(text, RatingsReply, what="rating reply").scores)
    if len(ratings) != expected:
        raise ProviderResponseError(f"rating reply: {len(ratings)} ratings for {expected} passages")
    return ratings


class LLMReranker:
    """Relevance ratings from a chat model, ``batch`` passages per request.

    Each passage is cut to ``max_chars`` characters in the prompt. The new score is
    ``rating / 10`` (0..1), stored in ``score`` and ``scores.rerank``. If any request fails,
    the whole call degrades to the incoming order, trimmed to ``top_k``.
    """

    def __init__(self, chat: ChatProvider, *, batch: int = 10, max_chars: int = 2000) -> None:
        if not callable(getattr(chat, "chat", None)):
            raise ConfigurationError(f"LLMReranker needs a ChatProvider (an object with chat()); got {chat!r}")
        check_int(batch, "batch", minimum=1)
        check_int(max_chars, "max_chars", minimum=1)
        self.chat = chat
        self.batch = batch
        self.max_chars = max_chars

    def __repr__(self) -> str:
        return f"LLMReranker({self.chat!r}, batch={self.batch})"

    def rerank(self, query: str, results: Sequence[RetrievalResult], top_k: int) -> list[RetrievalResult]:
        _check_top_k(top_k)
        items = list(results)
        ratings: list[float] = []
        for start in range(0, len(items), self.batch):
            chunk = items[start : start + self.batch]
            try:
                reply = self.chat.chat(self._messages(query, chunk), json_schema=RATINGS_SCHEMA)
                ratings.extend(parse_ratings(reply, len(chunk)))
            except Exception as exc:  # Why: a reranker degrades gracefully on any LLM failure (the results as they were)
                logger.warning(
                    "LLM rerank failed on results %d-%d (%s: %s); results pass through unchanged",
                    start, start + len(chunk) - 1, type(exc).__name__, exc,
                )  # fmt: skip
                return items[:top_k]
        rescored = [
            replace(
                r,
                score=rating / 10,
                scores=replace(r.scores, rerank=rating / 10),
                explanation=[*r.explanation, f"rerank: LLM rated {rating:g}/10"],
            )
            for r, rating in zip(items, ratings)
        ]
        return _sorted_by_score(rescored)[:top_k]

    def _messages(self, query: str, chunk: Sequence[RetrievalResult]) -> list[dict[str, str]]:
        passages = "\n\n".join(f"[{i}] {r.content[: self.max_chars]}" for i, r in enumerate(chunk, 1))
        user = f"Query: {query}\n\nPassages:\n{passages}\n\nReturn exactly {len(chunk)} scores."
        return [{"role": "system", "content": _SYSTEM_PROMPT}, {"role": "user", "content": user}]
