import engram

PINNED = {
    "AsyncMemory", "AuditEvent", "BenchmarkDataError", "Clock", "ConfigError", "ConflictError", "ConnectionLostError",
    "ContextBlock", "E5Embedder", "EmbeddingError", "Embedder", "EngramError", "FakeClock", "FakeHashEmbedder",
    "ImportConflictError", "ImportFormatError", "InvalidContentError", "InvalidScopeError", "InvalidValueError", "Kind", "LLMError",
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
    # integrity under attack and under load (issue 21)
    "PurgeReport", "WorkCancelledError", "CorruptDatabaseError",
    # names that say which rules they are (issue 26): a policy hook; Policy stays its alias
    "PolicyHook",
    # a stable keyed pseudonym for a label holding personal data (issue 28, item 5)
    "pseudonym",
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


# Memory keeps the everyday verbs; the rest lives on named parts (issue 23). Like
# PINNED, changing either is a deliberate act (issue 20's ``profile(scope)`` makes 20).
EVERYDAY = {
    "open", "close", "add", "remember", "remember_many", "search", "context", "recall", "get", "list", "scan",
    "update", "supersede", "forget", "restore", "purge", "purge_scope", "history", "stats", "profile",
}
PROPERTIES = {"location", "dialect", "pipeline", "tokenizer"}
PARTS = {
    "threads": {"record", "list", "turns", "search", "episode", "drop_expired"},
    "consolidation": {"run", "consolidator", "schedules", "clock", "run_due"},
    "approvals": {"list", "get", "approve", "reject", "expire"},
    "audit": {"list", "why", "link_answer", "answer", "recent_recalls"},
    "quality": {"sample", "list", "mark", "report"},
    "keys": {"status", "rotate", "reveal"},
    "jobs": {"list", "drain", "start_worker", "stop_worker"},
    "maintenance": {"run", "reindex"},
    "transfer": {"export_to", "import_from"},
    "scopes": {"tenants", "namespaces"},
}


def _public(cls: type) -> dict[str, object]:
    return {name: getattr(cls, name) for name in dir(cls) if not name.startswith("_")}


def test_memory_keeps_the_everyday_verbs_only():
    members = _public(engram.Memory)
    methods = {name for name, value in members.items() if callable(value)}
    properties = {name for name, value in members.items() if isinstance(value, property)}
    assert methods == EVERYDAY and len(methods) <= 20
    assert properties == PROPERTIES
    assert set(members) == methods | properties  # parts are instance attributes, typed on the class
    assert set(engram.Memory.__annotations__) == set(PARTS)


def test_each_part_is_small_and_named_as_pinned(tmp_path):
    with engram.Memory.open(str(tmp_path / "m.db"), embedder=engram.FakeHashEmbedder()) as memory:
        for part, names in PARTS.items():
            found = {name for name, value in _public(type(getattr(memory, part))).items() if callable(value)}
            assert found == names, part


def test_policy_is_the_policy_hook_by_its_first_name():
    assert engram.Policy is engram.PolicyHook
