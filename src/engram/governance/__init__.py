"""Governance an enterprise can run (issue 14), built on the one write path:

- approvals.py   pending changes: a change matching an approval rule waits for a
                 reviewer approves (optionally edited) or rejects; pending changes expire
- recalls.py     which answer used which memory: recall ids, answer links, provenance
- quality.py     write accuracy (reviewed samples, Wilson interval), recall hit rate,
                 repeat rate, writes/skips/PII actions on the live store
- prometheus.py  the text exposition of those figures (``GET /metrics``)
- keys.py        encryption keys (configuration or a provider hook), rotation, audited reveal

The ``Memory`` parts over all of it are in parts/governance.py, their public JSON shapes
in shapes/governance.py, the approval rules beside the write core (approval_rules.py).
Nothing here writes rows: every change is a value handed to the write core.
"""
