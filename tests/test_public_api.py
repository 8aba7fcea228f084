import engram

PINNED = {
    "AuditEvent", "BenchmarkDataError", "Clock", "ConfigError", "ConflictError", "ConnectionLostError",
    "ContextBlock", "E5Embedder", "EmbeddingError", "Embedder", "EngramError", "FakeClock", "FakeHashEmbedder",
    "ImportFormatError", "InvalidContentError", "InvalidScopeError", "InvalidValueError", "Kind", "LLMError",
    "LLMRateLimitError", "LLMResponseError", "LLMTimeoutError", "Memory", "MemoryDraft", "MemoryRecord", "Message",
    "MigrationError", "NotAnEngramDatabaseError", "NotFoundError", "Operation", "Page", "PermissionDeniedError",
    "Policy", "Scope", "SearchHit", "Sensitivity", "Settings", "Signals", "Source", "Stats", "Status",
    "StorageError", "SystemClock", "USEEmbedder", "ValidationError", "Version", "WriteIntent", "__version__",
    # the write path's public types (issue 10)
    "AddEvent", "AddResult", "ImportResult", "Job", "JobStatus", "MaintenanceReport", "PIIForbiddenError",
    "PIIPolicies", "PIIPolicy",
    # governance (issue 14)
    "ApprovalRule", "ApprovalRules", "KeyProvider", "KeyStatus", "PendingApprovalError", "PendingChange",
    "PendingStatus", "Provenance", "QualityReport", "Recall", "RecallEvent", "RecallTrace", "Revealed", "Rotation",
    "Verdict", "WriteSample",
    # episodes and consolidation (issue 13)
    "ConsolidationReport", "ExcerptTurn", "Schedule", "Thread", "ThreadExcerpt", "Turn",
    # the store's tokenizer (issue 10, item 5)
    "StaleTermsError",
    # typed storage errors (issue 11)
    "ReadOnlyStoreError", "StorageFullError",
}


def test_public_api_is_pinned():
    """Adding or removing a public name is a deliberate act: update PINNED with it."""
    assert set(engram.__all__) == PINNED
    for name in engram.__all__:
        assert getattr(engram, name) is not None


def test_every_error_is_an_engram_error():
    for name in engram.__all__:
        value = getattr(engram, name)
        if isinstance(value, type) and issubclass(value, Exception):
            assert issubclass(value, engram.EngramError)
