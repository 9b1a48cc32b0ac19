"""The one error tree of kgrag-neo4j.

Every error the library raises on purpose is a ``KgragError``; catching that one class is
enough at an application boundary (the CLI turns it into one line on stderr)::

    KgragError
    ├── ConfigurationError        bad options, a missing optional extra, a missing API key
    ├── InputError (ValueError)   bad user input; nothing was written
    │   ├── ExtractionError       a file that cannot be turned into text
    │   ├── UnsupportedContentType
    │   └── DimensionMismatchError  embeddings whose length differs from the schema's
    ├── NotFoundError (KeyError)  ``get_*`` of an id that is not there
    ├── CypherRegistryError       a malformed ``cypher/`` file (message names ``file:line``)
    ├── StoreError                the database failed
    │   ├── ConnectionFailed      unreachable server (bounded wait, then this)
    │   ├── AuthenticationFailed  wrong user or password
    │   ├── DatabaseNotFound      the named database does not exist
    │   ├── SchemaNotReady        indexes missing or not ONLINE
    │   └── TransientStoreError   retried and still failing (deadlock, leader switch, ...)
    │       └── TransactionMemoryError  a transaction outgrew the server's transaction memory
    ├── ServerError               the local Neo4j server (java, maven, port, start-up)
    ├── Cancelled                 the caller's cancel event was set; nothing half-written
    └── ProviderError             an embedding / chat / rerank provider failed
        ├── RateLimitError        429 after the retries were spent
        ├── ProviderTimeout
        └── ProviderResponseError a body that does not have the expected shape

``retryable`` says whether repeating the same call later can succeed.
"""

from __future__ import annotations

__all__ = [
    "NO_CHAT_MESSAGE",
    "AuthenticationFailed",
    "Cancelled",
    "ConfigurationError",
    "ConnectionFailed",
    "CypherRegistryError",
    "DatabaseNotFound",
    "DimensionMismatchError",
    "ExtractionError",
    "InputError",
    "KgragError",
    "NotFoundError",
    "ProviderError",
    "ProviderResponseError",
    "ProviderTimeout",
    "RateLimitError",
    "SchemaNotReady",
    "ServerError",
    "StoreError",
    "TransactionMemoryError",
    "TransientStoreError",
    "UnsupportedContentType",
]


#: the ConfigurationError of every command or call that needs a chat model and has none
NO_CHAT_MESSAGE = (
    "no chat model configured: set CO_API_KEY (Cohere), or OPENAI_API_KEY and/or OPENAI_BASE_URL "
    "(OpenAI, Azure OpenAI, Ollama, vLLM, LM Studio; OPENAI_MODEL names the model), "
    "and choose with --llm cohere|openai"
)


class KgragError(Exception):
    """Root of every error kgrag-neo4j raises on purpose."""

    retryable: bool = False


class ConfigurationError(KgragError):
    """Invalid options, a missing optional dependency, or a missing credential."""


class InputError(KgragError, ValueError):
    """The caller's input is invalid; nothing was written."""


class ExtractionError(InputError):
    """The content could not be turned into text (binary, broken PDF, bad encoding)."""


class UnsupportedContentType(InputError):
    """No extractor is registered for this content type."""


class DimensionMismatchError(InputError):
    """An embedding's length differs from the dimensions recorded in the database."""

    def __init__(self, message: str, *, expected: int | None = None, got: int | None = None):
        super().__init__(message)
        self.expected = expected
        self.got = got


class NotFoundError(KgragError, KeyError):
    """A ``get_*`` call named something that does not exist."""

    def __str__(self) -> str:  # KeyError quotes its argument; we want the plain sentence
        return str(self.args[0]) if self.args else ""


class CypherRegistryError(KgragError):
    """A ``cypher/`` file is malformed; the message starts with ``path:line``."""


class StoreError(KgragError):
    """The database refused or failed an operation."""


class ConnectionFailed(StoreError):
    """The Neo4j server could not be reached."""

    retryable = True


class AuthenticationFailed(StoreError):
    """The server rejected the user name or password."""


class DatabaseNotFound(StoreError):
    """The named database does not exist on the server."""


class SchemaNotReady(StoreError):
    """The schema (constraints, indexes) is missing or not ONLINE yet."""


class TransientStoreError(StoreError):
    """A transient failure that outlived the retries (deadlock, leader switch, ...)."""

    retryable = True


class TransactionMemoryError(TransientStoreError):
    """A transaction needed more memory than the server allows transactions
    (``dbms.memory.transaction.total.max``, 70% of the heap by default): the same work in
    smaller transactions, or a larger heap, goes through."""


class ServerError(KgragError):
    """The local Neo4j server could not be installed, started or stopped."""


class Cancelled(KgragError):
    """Work stopped because its cancel event was set (``Ingestor.cancel()``). What was cut
    short was not written; what had been written before stays whole."""


class ProviderError(KgragError):
    """A model provider (embedding, chat, rerank) failed."""


class RateLimitError(ProviderError):
    """The provider kept answering 429 after the retries were spent."""

    retryable = True


class ProviderTimeout(ProviderError):
    """The provider did not answer in time."""

    retryable = True


class ProviderResponseError(ProviderError):
    """The provider answered with a body of the wrong shape."""
