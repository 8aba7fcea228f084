"""engram: long-term memory for AI agents.

    from engram import Memory, Scope
    memory = Memory.open("memory.db")
    alice = Scope.for_user("acme", "alice")
    memory.remember("Prefers concise reports", alice, kind="preference")
    print(memory.context("how should I write the report?", alice).text)
"""

from __future__ import annotations

from .aio import AsyncMemory
from .approval_rules import ApprovalRule, ApprovalRules
from .changes import Policy, PolicyHook, WriteIntent
from .clock import Clock, FakeClock, SystemClock
from .config import Settings
from .consolidation.run import ConsolidationReport
from .consolidation.schedule import Schedule
from .embed import E5Embedder, Embedder, FakeHashEmbedder, USEEmbedder
from .episodes.search import ExcerptTurn, ThreadExcerpt
from .errors import (
    BenchmarkDataError,
    ConfigError,
    ConflictError,
    ConnectionLostError,
    CorruptDatabaseError,
    EmbeddingError,
    EngramError,
    ImportConflictError,
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
    PIIForbiddenError,
    ReadOnlyStoreError,
    StaleTermsError,
    StorageError,
    StorageFullError,
    ValidationError,
    WorkCancelledError,
)
from .governance.keys import KeyStatus, Revealed, Rotation
from .governance.quality import QualityReport
from .governance.recalls import Provenance, Recall, RecallTrace
from .jsonl import ImportResult
from .maintenance import MaintenanceReport
from .memory import Memory
from .model import (
    AuditEvent,
    Job,
    JobStatus,
    Kind,
    MemoryRecord,
    Message,
    Operation,
    Page,
    PurgeReport,
    Scope,
    SearchHit,
    Sensitivity,
    Signals,
    Source,
    Stats,
    Status,
    Version,
)
from .pii import KeyProvider, PIIPolicies, PIIPolicy, pseudonym
from .pipeline.run import AddEvent, AddResult
from .search.context import ContextBlock
from .values.episodes import Thread, Turn
from .values.governance import PendingApprovalError, PendingChange, PendingStatus, RecallEvent, Verdict, WriteSample
from .writes import MemoryDraft

__version__ = "0.1.0"

__all__ = [
    "AddEvent",
    "AddResult",
    "ApprovalRule",
    "ApprovalRules",
    "AsyncMemory",
    "AuditEvent",
    "BenchmarkDataError",
    "Clock",
    "ConfigError",
    "ConflictError",
    "ConnectionLostError",
    "ConsolidationReport",
    "ContextBlock",
    "CorruptDatabaseError",
    "E5Embedder",
    "Embedder",
    "EmbeddingError",
    "EngramError",
    "ExcerptTurn",
    "FakeClock",
    "FakeHashEmbedder",
    "ImportConflictError",
    "ImportFormatError",
    "ImportResult",
    "InvalidContentError",
    "InvalidScopeError",
    "InvalidValueError",
    "Job",
    "JobStatus",
    "KeyProvider",
    "KeyStatus",
    "Kind",
    "LLMError",
    "LLMRateLimitError",
    "LLMResponseError",
    "LLMTimeoutError",
    "MaintenanceReport",
    "Memory",
    "MemoryDraft",
    "MemoryRecord",
    "Message",
    "MigrationError",
    "NotAnEngramDatabaseError",
    "NotFoundError",
    "Operation",
    "PIIForbiddenError",
    "PIIPolicies",
    "PIIPolicy",
    "Page",
    "PendingApprovalError",
    "PendingChange",
    "PendingStatus",
    "PermissionDeniedError",
    "Policy",
    "PolicyHook",
    "Provenance",
    "PurgeReport",
    "QualityReport",
    "ReadOnlyStoreError",
    "Recall",
    "RecallEvent",
    "RecallTrace",
    "Revealed",
    "Rotation",
    "Schedule",
    "Scope",
    "SearchHit",
    "Sensitivity",
    "Settings",
    "Signals",
    "Source",
    "StaleTermsError",
    "Stats",
    "Status",
    "StorageError",
    "StorageFullError",
    "SystemClock",
    "Thread",
    "ThreadExcerpt",
    "Turn",
    "USEEmbedder",
    "ValidationError",
    "Verdict",
    "Version",
    "WorkCancelledError",
    "WriteIntent",
    "WriteSample",
    "__version__",
    "pseudonym",
]
