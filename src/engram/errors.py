"""One exception tree for everything engram raises.

    EngramError
    ├── ValidationError            bad input from the caller; nothing was changed
    │   ├── InvalidScopeError      tenant / namespace labels
    │   ├── InvalidContentError    empty or oversized content
    │   ├── InvalidValueError      NaN / out-of-range numbers, unknown kinds, bad filters
    │   └── ImportFormatError      a malformed JSONL line (carries ``line``)
    ├── NotFoundError              no such record in the caller's scope
    ├── ConflictError              a compare-and-swap lost: the record changed meanwhile
    │   └── WorkCancelledError     the job or lease a write ran under is gone (its scope was purged)
    ├── PermissionDeniedError      read-only memory, refused by a policy hook
    │   └── PIIForbiddenError      the PII policy forbids storing what was found
    ├── PendingApprovalError       an approval rule matched: kept as a pending change, not written
    │                              (defined next to PendingChange, in engram.values.governance)
    ├── StorageError               the database failed (driver errors are translated once)
    │   ├── NotAnEngramDatabaseError   another program's file, or an empty one
    │   ├── CorruptDatabaseError   the file is damaged: opened for reading at most, never written
    │   ├── MigrationError
    │   ├── StorageFullError       the disk (or the database's size limit) is full; nothing written
    │   ├── ReadOnlyStoreError     the database was opened read-only (file not writable); reads work
    │   └── ConnectionLostError    the server went away; nothing half-written
    ├── EmbeddingError             the embedder failed or returned the wrong shape
    ├── LLMError                   the model provider failed
    │   ├── LLMTimeoutError
    │   ├── LLMRateLimitError
    │   └── LLMResponseError       the answer could not be parsed into what was asked
    ├── BenchmarkDataError         a benchmark file is missing or malformed
    └── ConfigError                settings that cannot work together

Driver and provider errors are translated at the boundary with ``raise ... from exc``.
"""

from __future__ import annotations


class EngramError(Exception):
    """Base class of every error engram raises on purpose."""


class ValidationError(EngramError, ValueError):
    """The caller passed something engram cannot accept; nothing was changed."""


class InvalidScopeError(ValidationError):
    pass


class InvalidContentError(ValidationError):
    pass


class InvalidValueError(ValidationError):
    pass


class ImportFormatError(ValidationError):
    def __init__(self, message: str, *, line: int) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


class NotFoundError(EngramError, KeyError):
    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else "not found"


class ConflictError(EngramError):
    """A write expected one version of a record and found another."""


class ImportConflictError(ConflictError):
    """Imported records whose ids already exist, with nothing written. ``remedy`` words
    the choice (skip or replace) as the caller's surface takes it."""

    def __init__(self, count: int, example: str) -> None:
        self.count, self.example = count, example
        super().__init__(self.worded("pass on_conflict='skip' or 'replace'"))

    def worded(self, remedy: str) -> str:
        """The message with a surface's own remedy (shown there as a ConflictError)."""
        return f"{self.count} imported records already exist (e.g. {self.example}); {remedy}"


class WorkCancelledError(ConflictError):
    """Background work (a job, a consolidation run) wrote under a job or a lease that is
    gone: its scope was purged meanwhile (or the job cancelled). Nothing was written."""


class PermissionDeniedError(EngramError, PermissionError):
    pass


class PIIForbiddenError(PermissionDeniedError):
    """The tenant's PII policy forbids storing a kind of personal data the text holds."""

    def __init__(self, message: str, *, kinds: tuple[str, ...]) -> None:
        super().__init__(message)
        self.kinds = kinds


class StorageError(EngramError):
    pass


class NotAnEngramDatabaseError(StorageError):
    pass


class MigrationError(StorageError):
    pass


class CorruptDatabaseError(StorageError):
    """The database file is damaged (SQLite's quick_check, or a read that met a broken
    page): engram does not write to it. Restore a backup, or read what is left with
    ``SQLiteStore(path, read_only=True)``."""


class StorageFullError(StorageError):
    """The disk or the database's size limit is full: the write was rolled back whole."""


class ReadOnlyStoreError(StorageError):
    """The database is open read-only (its file is not writable): reads work, writes are refused."""


class ConnectionLostError(StorageError):
    pass


class EmbeddingError(EngramError):
    pass


class LLMError(EngramError):
    pass


class LLMTimeoutError(LLMError):
    pass


class LLMRateLimitError(LLMError):
    pass


class LLMResponseError(LLMError):
    """The model answered, but not in a shape we can use (e.g. unparseable JSON)."""

    def __init__(self, message: str, *, raw: str = "") -> None:
        super().__init__(message)
        self.raw = raw


class BenchmarkDataError(EngramError):
    pass


class ConfigError(EngramError):
    pass


class StaleTermsError(ConfigError):
    """The store's lexical terms came from another tokenizer than this process uses
    (an older engram, or another CJK mode) and rebuilding them on open is off."""
