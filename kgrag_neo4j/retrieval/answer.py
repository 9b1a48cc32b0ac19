"""Answers: retrieve, put the numbered passages in a prompt, let a chat model answer with
citations, and say which passages (chunk ids and sources) it cited.

    result = answer("How are vector indexes created?", retriever=retriever, chat=chat)
    print(result.text)                       # "... with CREATE VECTOR INDEX [1]."
    for c in result.cited: print(c.number, c.source, c.chunk_id)

    for piece in answer(query, retriever=retriever, chat=chat, stream=True):   # as it is written
        print(piece, end="")

Pure orchestration over the ``Retriever`` and ``ChatProvider`` ports. With nothing retrieved
the model is not asked (it could only guess) and the answer says so.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..errors import NO_CHAT_MESSAGE, ConfigurationError, InputError
from ..protocols import ChatProvider
from ..types import RetrievalResult
from ..validation import check_int

__all__ = [
    "Answer",
    "AnswerStream",
    "Citation",
    "DEFAULT_SYSTEM_PROMPT",
    "NOTHING_FOUND",
    "aanswer",
    "answer",
    "answer_messages",
    "retrieve_async",
]

DEFAULT_SYSTEM_PROMPT = """\
You answer questions from the numbered context passages below, and from nothing else.
Cite every passage you use with its number in square brackets, like [1] or [2][3], right after
the statement it supports. If the passages do not contain the answer, say that you do not know."""

NOTHING_FOUND = "I found nothing in the knowledge base about this, so I cannot answer it."

_CITATION = re.compile(r"\[(\d+(?:\s*[,;]\s*\d+)*)\]")


@dataclass(frozen=True, slots=True)
class Citation:
    """A context passage: its number in the prompt, where it comes from, and whether the
    answer cites it."""

    number: int
    chunk_id: str
    document_id: str
    source: str
    title: str
    score: float
    cited: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "chunk_id": self.chunk_id,
            "document_id": self.document_id,
            "source": self.source,
            "title": self.title,
            "score": self.score,
            "cited": self.cited,
        }


@dataclass(slots=True)
class Answer:
    """The model's answer, every passage it was given (``citations``) and the retrieval
    results themselves. ``cited`` are the passages the text refers to."""

    query: str
    text: str
    citations: list[Citation] = field(default_factory=list)
    results: list[RetrievalResult] = field(default_factory=list)
    model: str = ""

    @property
    def cited(self) -> list[Citation]:
        return [c for c in self.citations if c.cited]

    def to_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "answer": self.text,
            "model": self.model,
            "citations": [c.as_dict() for c in self.citations],
            "results": [r.to_json() for r in self.results],
        }


def cited_numbers(text: str, count: int) -> set[int]:
    """The passage numbers ``text`` cites (``[2]``, ``[1, 3]``, ``[1][2]``) among 1..count."""
    numbers: set[int] = set()
    for group in _CITATION.findall(text):
        numbers.update(int(n) for n in re.split(r"\s*[,;]\s*", group))
    return {n for n in numbers if 1 <= n <= count}


def _citations(results: Sequence[RetrievalResult], text: str) -> list[Citation]:
    used = cited_numbers(text, len(results))
    return [Citation(i, r.id, r.document_id, r.source, r.title, r.score, cited=i in used) for i, r in enumerate(results, start=1)]


def answer_messages(
    query: str,
    results: Sequence[RetrievalResult],
    *,
    system_prompt: str = DEFAULT_SYSTEM_PROMPT,
    max_context_chars: int = 12000,
) -> list[dict[str, str]]:
    """The prompt: the system instructions, then the numbered passages (with their source
    and, for graph-found ones, how they were reached) and the question. Passages are cut
    evenly so that together they fit ``max_context_chars``."""
    per_passage = max(200, max_context_chars // max(1, len(results)))
    number = {r.id: i for i, r in enumerate(results, start=1)}
    blocks = []
    for i, r in enumerate(results, start=1):
        where = " - ".join(x for x in (r.title, r.source) if x) or r.document_id or r.id
        content = r.content.strip()
        if len(content) > per_passage:
            content = content[: per_passage - 1].rstrip() + "…"
        lines = [f"[{i}] ({where})", content]
        for g in r.graph_context:
            via = f"[{number[g.from_chunk_id]}]" if g.from_chunk_id in number else "another passage"
            note = f': "{g.description}"' if g.description else ""
            lines.append(f"(reached from {via} through a {g.relation} link{note})")
        blocks.append("\n".join(lines))
    user = "Context passages:\n\n" + "\n\n".join(blocks) + f"\n\nQuestion: {query}"
    return [{"role": "system", "content": system_prompt}, {"role": "user", "content": user}]


class AnswerStream:
    """Iterate for the answer's text as the model writes it. ``citations`` (all passages,
    none marked cited yet) is there from the start; after the iteration ``answer`` holds the
    whole ``Answer`` with the cited passages marked."""

    def __init__(self, query: str, results: list[RetrievalResult], pieces: Iterator[str], model: str) -> None:
        self.query, self.results, self.model = query, results, model
        self.citations = _citations(results, "")
        self._pieces = pieces
        self._parts: list[str] = []
        self.answer: Answer | None = None

    def __iter__(self) -> Iterator[str]:
        for piece in self._pieces:
            self._parts.append(piece)
            yield piece
        text = "".join(self._parts)
        self.citations = _citations(self.results, text)
        self.answer = Answer(self.query, text, self.citations, self.results, self.model)


def _check(query: Any, retriever: Any, chat: Any, top_k: Any) -> ChatProvider:
    """``chat``, once the arguments of an ``answer`` are known to be usable."""
    if not isinstance(query, str) or not query.strip():
        raise InputError("the question must be non-empty text")
    if chat is None:
        raise ConfigurationError(NO_CHAT_MESSAGE)
    if not callable(getattr(chat, "chat", None)):
        raise ConfigurationError(f"chat must be a ChatProvider (with .chat()); got {type(chat).__name__}")
    if not callable(getattr(retriever, "retrieve", None)):
        raise ConfigurationError(f"retriever must have retrieve(query, top_k); got {type(retriever).__name__}")
    check_int(top_k, "top_k", minimum=1, error=InputError)
    return chat


def _respond(
    query: str, results: list[RetrievalResult], chat: ChatProvider, *, stream: bool, system_prompt: str, max_context_chars: int
) -> Answer | AnswerStream:
    model = str(getattr(chat, "model", "") or "")
    if not results:
        pieces: Iterator[str] = iter([NOTHING_FOUND])
        return AnswerStream(query, results, pieces, model) if stream else Answer(query, NOTHING_FOUND, [], [], model)
    messages = answer_messages(query, results, system_prompt=system_prompt, max_context_chars=max_context_chars)
    if stream:
        streamer = getattr(chat, "chat_stream", None)
        pieces = streamer(messages) if callable(streamer) else iter([chat.chat(messages)])
        return AnswerStream(query, results, pieces, model)
    text = chat.chat(messages)
    return Answer(query, text, _citations(results, text), results, model)


def answer(
    query: str,
    *,
    retriever: Any,
    chat: ChatProvider | None,
    top_k: int = 5,
    stream: bool = False,
    system_prompt: str = DEFAULT_SYSTEM_PROMPT,
    max_context_chars: int = 12000,
) -> Answer | AnswerStream:
    """Retrieve ``top_k`` passages with ``retriever`` (any kgrag retriever) and have ``chat``
    answer from them with citations. ``stream=True`` returns an ``AnswerStream`` (the model's
    ``chat_stream`` when it has one). ``chat=None`` is a ``ConfigurationError`` that says how
    to configure a chat model."""
    model = _check(query, retriever, chat, top_k)
    results = list(retriever.retrieve(query, top_k))
    return _respond(query, results, model, stream=stream, system_prompt=system_prompt, max_context_chars=max_context_chars)


async def aanswer(
    query: str,
    *,
    retriever: Any,
    chat: ChatProvider | None,
    top_k: int = 5,
    system_prompt: str = DEFAULT_SYSTEM_PROMPT,
    max_context_chars: int = 12000,
) -> Answer:
    """``answer`` for an event loop: retrieval with ``aretrieve``; the chat call (blocking
    HTTP in the SDKs) runs in a worker thread."""
    import asyncio

    model = _check(query, retriever, chat, top_k)
    results = list(await retrieve_async(retriever, query, top_k))
    return await asyncio.to_thread(
        _respond_whole, query, results, model, system_prompt=system_prompt, max_context_chars=max_context_chars
    )


def _respond_whole(
    query: str, results: list[RetrievalResult], chat: ChatProvider, *, system_prompt: str, max_context_chars: int
) -> Answer:
    out = _respond(query, results, chat, stream=False, system_prompt=system_prompt, max_context_chars=max_context_chars)
    assert isinstance(out, Answer)  # stream=False always answers whole
    return out


@runtime_checkable
class AsyncRetriever(Protocol):
    async def aretrieve(self, query: str, top_k: int = 5) -> list[RetrievalResult]: ...


async def retrieve_async(retriever: Any, query: str, top_k: int) -> list[RetrievalResult]:
    """``await retriever.aretrieve(query, top_k)``; a retriever of the caller's own that
    declares no ``aretrieve`` coroutine (``AsyncRetriever``) runs in a worker thread, so the
    event loop is not blocked."""
    import asyncio

    if isinstance(retriever, AsyncRetriever) and inspect.iscoroutinefunction(retriever.aretrieve):
        return await retriever.aretrieve(query, top_k)
    return await asyncio.to_thread(retriever.retrieve, query, top_k)
