"""The values every layer shares, at the bottom of the package: they import nothing of engram
but ``errors`` and ``model``. ``values.governance``: pending changes, verdicts, write samples,
recall events; ``values.episodes``: threads, turns, the episode writes. ``model.py`` (records,
scopes, versions, audit) and ``slots.py`` are bottom modules of the same layer (docs/ARCHITECTURE.md)."""
