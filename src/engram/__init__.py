"""engram: long-term memory for AI agents.

    from engram import Memory, Scope
    memory = Memory.open("memory.db")
    alice = Scope.for_user("acme", "alice")
    memory.remember("Prefers concise reports", alice, kind="preference")
    print(memory.context("how should I write the report?", alice).text)
"""

from __future__ import annotations

from .clock import Clock, FakeClock, SystemClock
from .config import Settings
from .embed import E5Embedder, Embedder, FakeHashEmbedder, USEEmbedder
from .errors import (
    BenchmarkDataError,
    ConfigError,
    ConflictError,
    ConnectionLostError,
    EmbeddingError,
    EngramError,
    ImportFormatError,
    InvalidContentError,
    InvalidScopeError,
    InvalidValueError,
    LLMError,
    LLMRateLimitError,
    LLMResponseError,
    LLMTimeoutError,
    MigrationError,
    NotAnEngramDatabaseError,
    NotFoundError,
    PermissionDeniedError,
    StorageError,
    ValidationError,
)
from .memory import Memory, Policy, WriteIntent
from .model import (
    AuditEvent,
    Kind,
    MemoryRecord,
    Message,
    Operation,
    Page,
    Scope,
    SearchHit,
    Sensitivity,
    Signals,
    Source,
    Stats,
    Status,
    Version,
)
from .search.context import ContextBlock
from .writes import MemoryDraft

__version__ = "0.1.0"

__all__ = [
    "AuditEvent",
    "BenchmarkDataError",
    "Clock",
    "ConfigError",
    "ConflictError",
    "ConnectionLostError",
    "ContextBlock",
    "E5Embedder",
    "Embedder",
    "EmbeddingError",
    "EngramError",
    "FakeClock",
    "FakeHashEmbedder",
    "ImportFormatError",
    "InvalidContentError",
    "InvalidScopeError",
    "InvalidValueError",
    "Kind",
    "LLMError",
    "LLMRateLimitError",
    "LLMResponseError",
    "LLMTimeoutError",
    "Memory",
    "MemoryDraft",
    "MemoryRecord",
    "Message",
    "MigrationError",
    "NotAnEngramDatabaseError",
    "NotFoundError",
    "Operation",
    "Page",
    "PermissionDeniedError",
    "Policy",
    "Scope",
    "SearchHit",
    "Sensitivity",
    "Settings",
    "Signals",
    "Source",
    "Stats",
    "Status",
    "StorageError",
    "SystemClock",
    "USEEmbedder",
    "ValidationError",
    "Version",
    "WriteIntent",
    "__version__",
]
