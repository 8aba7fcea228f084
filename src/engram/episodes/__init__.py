"""Episodic memory: conversations kept as threads of turns, searched by meaning and
by words (``search_past_conversations``), and summarised into ``episode`` memories
once a thread goes idle. See docs/EPISODES.md."""
