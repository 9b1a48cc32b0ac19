"""``KnowledgeTool``: a retriever as an agent tool named ``knowledge_search``.

The tool any agent framework can take: a ``name``, a ``description``, the JSON schema of its
``parameters`` (one required ``query`` string), and a call that returns text. The forms
frameworks ask for are all here: ``definition()`` (the function-tool shape of OpenAI-style
chat APIs), ``execute(arguments)`` for the JSON argument string a model produces (errors come
back as ``ToolResult.error``, never raised into the agent loop), and ``tool(query)`` /
``tool.run(query)`` for frameworks that wrap a plain function.

Defaults: a ``HybridRetriever`` over the store and
embedder when no ``retriever`` is given, and ``top_k`` 5. The output lists the results under
``From knowledge base:`` with graph-found results carrying their ``↳ Related`` lines
(:func:`kgrag_neo4j.retrieval.format.format_knowledge`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigurationError, KgragError
from ..protocols import EmbeddingProvider, Retriever, Store
from ..validation import check_int
from .format import format_knowledge

__all__ = ["KNOWLEDGE_TOOL_NAME", "KnowledgeTool", "ToolResult"]

KNOWLEDGE_TOOL_NAME = "knowledge_search"
DEFAULT_DESCRIPTION = (
    "Search the knowledge base (ingested documents and what the graph links to them) for "
    "information relevant to a question. Returns numbered passages with their sources."
)
PARAMETERS: Mapping[str, Any] = {
    "type": "object",
    "properties": {"query": {"type": "string", "description": "What to search for, in natural language."}},
    "required": ["query"],
    "additionalProperties": False,
}
HEADER = "From knowledge base:"


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What one tool call returns: ``content`` for the model, or ``error`` (then content is
    empty). ``count`` is the number of results found."""

    content: str = ""
    error: str = ""
    count: int = 0

    @property
    def ok(self) -> bool:
        return not self.error

    def text(self) -> str:
        """What to hand back to the model: the content, or the error as a sentence."""
        return self.content if self.ok else f"Error: {self.error}"


class KnowledgeTool:
    """The ``knowledge_search`` agent tool over a retriever (module docstring)."""

    name = KNOWLEDGE_TOOL_NAME

    def __init__(
        self,
        store: Store | None = None,
        embedder: EmbeddingProvider | None = None,
        *,
        retriever: Retriever | None = None,
        top_k: int = 5,
        max_chars: int | None = 1200,
        description: str = DEFAULT_DESCRIPTION,
    ):
        check_int(top_k, "top_k", minimum=1)
        if max_chars is not None:
            check_int(max_chars, "max_chars (or None)", minimum=1)
        if retriever is None:
            if store is None or embedder is None:
                raise ConfigurationError("KnowledgeTool needs a retriever, or a store and an embedder")
            from .modes import build_retriever

            retriever = build_retriever("hybrid", store, embedder)
        if not callable(getattr(retriever, "retrieve", None)):
            raise ConfigurationError(f"retriever must have retrieve(query, top_k), got {type(retriever).__name__}")
        self.retriever = retriever
        self.top_k = top_k
        self.max_chars = max_chars
        self.description = description

    @property
    def parameters(self) -> dict[str, Any]:
        """JSON schema of the arguments."""
        return json.loads(json.dumps(PARAMETERS))

    def definition(self) -> dict[str, Any]:
        """The tool in the function-tool shape OpenAI-style chat APIs take in ``tools=[...]``."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }

    def search(self, query: object) -> ToolResult:
        """Retrieve ``top_k`` results for ``query`` and format them; errors become the
        result's ``error`` (bad input, database or provider failures)."""
        if not isinstance(query, str) or not query.strip():
            return ToolResult(error="invalid args: query must be non-empty text")
        try:
            results = self.retriever.retrieve(query, self.top_k)
        except KgragError as exc:
            return ToolResult(error=f"retrieval error: {type(exc).__name__}: {exc}")
        if not results:
            return ToolResult(content=f"No relevant information found for {query!r}.")
        body = format_knowledge(results, max_chars=self.max_chars)
        return ToolResult(content=f"{HEADER}\n{body}", count=len(results))

    def execute(self, arguments: str | bytes | Mapping[str, Any]) -> ToolResult:
        """Run a call whose arguments are the model's JSON (text or an already decoded
        mapping) with a ``query`` key."""
        if isinstance(arguments, (str, bytes)):
            try:
                arguments = json.loads(arguments)
            except ValueError as exc:
                return ToolResult(error=f"invalid args: not JSON ({exc})")
        if not isinstance(arguments, Mapping):
            return ToolResult(error="invalid args: expected an object with a 'query' string")
        unknown = sorted(set(arguments) - {"query"})
        if unknown:
            return ToolResult(error=f"invalid args: unknown argument(s) {', '.join(unknown)}")
        return self.search(arguments.get("query"))

    def run(self, query: str) -> str:
        """The text for the model (an error as ``Error: ...``), for function-wrapping frameworks."""
        return self.search(query).text()

    def __call__(self, query: str) -> str:
        return self.run(query)

    def __repr__(self) -> str:
        return f"KnowledgeTool(name={self.name!r}, retriever={type(self.retriever).__name__}, top_k={self.top_k})"
