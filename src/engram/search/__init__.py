"""Lexical terms, hybrid retrieval and context building."""
