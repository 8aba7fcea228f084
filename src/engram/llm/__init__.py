"""Language models behind one protocol: OpenAI-compatible HTTP, LangChain, llama.cpp, a fake."""

from .base import LLM, Completion, TokenUsage
from .fake import ScriptedCall, ScriptedLLM, ScriptExhaustedError
from .http import HTTPStatusError, post_json
from .jsonrepair import parse_json_answer
from .langchain import LangChainLLM
from .llama import LlamaCppLLM
from .openai import OpenAICompatibleLLM

__all__ = [
    "LLM",
    "Completion",
    "HTTPStatusError",
    "LangChainLLM",
    "LlamaCppLLM",
    "OpenAICompatibleLLM",
    "ScriptExhaustedError",
    "ScriptedCall",
    "ScriptedLLM",
    "TokenUsage",
    "parse_json_answer",
    "post_json",
]
