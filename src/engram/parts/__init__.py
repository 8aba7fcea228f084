"""The named parts of ``Memory`` (``memory.threads``, ``memory.approvals``, ``memory.jobs``, …),
all in one place, each a small class over the write core:

- episodes.py    Threads (conversations kept as threads of turns), Consolidation
- governance.py  Approvals, Audit, Quality, Keys
- operations.py  Jobs, Maintenance, Transfer (export/import), Scopes

A part sits above the logic it calls (episodes/, governance/, pipeline/, consolidation/) and
below the facade (memory.py, aio.py) that hands it out (docs/ARCHITECTURE.md)."""
