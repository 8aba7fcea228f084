"""Governance an enterprise can run (issue 14), built on the one write path:

- approvals.py   approval rules; a matching change becomes a pending change that a
                 reviewer approves (optionally edited) or rejects; pending changes expire
- recalls.py     which answer used which memory: recall ids, answer links, provenance
- quality.py     write accuracy (reviewed samples, Wilson interval), recall hit rate,
                 repeat rate, writes/skips/PII actions on the live store
- prometheus.py  the text exposition of those figures (``GET /metrics``)
- keys.py        encryption keys (configuration or a provider hook), rotation, audited reveal
- facade.py      the thin ``Memory`` methods over all of it
- shapes.py      their public JSON shapes (CLI, HTTP, MCP)

Nothing here writes rows: every change is a value handed to the write core.
"""
