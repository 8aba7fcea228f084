"""Entry points shaped like other memory libraries, for people moving to engram:
``engram.compat.mem0.Memory`` answers mem0's ``Memory`` calls with mem0's result shapes."""
