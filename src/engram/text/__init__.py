"""Text handling shared by the pipeline and search: the CJK-aware tokenizer (tokenize.py)."""
