"""`engram chat`: configuration errors, and a real turn against a local
OpenAI-compatible stub server (the model answers; engram recalls and extracts)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("langgraph.checkpoint.sqlite")

import typer
from typer.testing import CliRunner

from engram.cli.chat_cmd import chat_loop, register

sys.path.insert(0, str(Path(__file__).parent.parent))
from stub_openai import StubOpenAI, chat_reply


def app() -> typer.Typer:
    cli = typer.Typer()
    register(cli)

    @cli.command()
    def version() -> None:  # a second command keeps typer in multi-command mode
        pass

    return cli


@pytest.mark.parametrize("env", [
    {"LLM_MODEL": "", "OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""},
    {"LLM_MODEL": "gpt-4o-mini", "OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""},
])
def test_without_a_model_it_says_what_to_set_and_fails(env, tmp_path):
    result = CliRunner().invoke(app(), ["chat", "--user", "ana", "--db", str(tmp_path / "m.db")], env=env)
    assert result.exit_code == 2
    text = " ".join(result.output.split())
    assert "LLM_MODEL" in text and "OPENAI_API_KEY" in text and "OPENAI_BASE_URL" in text


def test_a_turn_against_an_openai_compatible_server(tmp_path):
    def answer(body):
        body = body or {}
        if "response_format" in body or "JSON" in str(body.get("messages", ""))[:4000]:
            return chat_reply('{"memories": []}')
        return chat_reply("Hello Ana, noted.")

    with StubOpenAI(answer) as stub:
        env = {"LLM_MODEL": "stub-model", "OPENAI_BASE_URL": stub.base_url, "OPENAI_API_KEY": "sk-test",
               "ENGRAM_EMBEDDER": "fake-hash"}
        result = CliRunner().invoke(
            app(), ["chat", "--user", "ana@example.com", "--thread", "t1", "--db", str(tmp_path / "m.db")],
            input="I live in Lisbon.\n/exit\n", env=env,
        )
    assert result.exit_code == 0, result.output
    assert "Hello Ana, noted." in result.output and "thread t1" in result.output
    chats = [r.body for r in stub.requests if r.body and r.body["messages"][0]["role"] == "system"
             and "long-term memory" in r.body["messages"][0]["content"]]
    assert chats and chats[0]["messages"][-1] == {"role": "user", "content": "I live in Lisbon."}
    assert (tmp_path / "m.threads.sqlite").exists()


def test_chat_loop_reads_until_exit_and_reports_errors():
    class Graph:
        def __init__(self):
            self.calls = []

        def invoke(self, state, config):
            self.calls.append((state, config))
            if state["messages"][0][1] == "boom":
                raise ConnectionError("server went away")
            from langchain_core.messages import AIMessage

            return {"messages": [AIMessage("ok")], "remembered": ["Lives in Lisbon"]}

    lines = iter(["hello", "", "boom", "again", "/exit", "never read"])
    out = []
    graph = Graph()
    turns = chat_loop(graph, "ana", "t", read=lambda: next(lines), write=lambda *a, **k: out.append(a[0]))
    assert turns == 2 and graph.calls[0][1] == {"configurable": {"user_id": "ana", "thread_id": "t"}}
    assert out.count("ok") == 2 and any("remembered: Lives in Lisbon" in line for line in out)
    assert any("the model call failed: ConnectionError" in line for line in out)


@pytest.mark.parametrize("answer", [
    '{"facts": "this is not the schema"}',
    '{"memories": [{"kind": "opinion", "content": "", "confidence": "high"}]}',
])
def test_chat_says_when_extraction_failed_for_a_turn(tmp_path, answer):
    from langchain_core.messages import AIMessage
    from langgraph.checkpoint.memory import InMemorySaver

    from engram import FakeHashEmbedder, Memory, Scope
    from engram.integrations.langgraph import build_memory_graph
    from engram.integrations.langgraph.scripted import ScriptedChatModel
    from engram.llm.fake import ScriptedLLM
    from engram.pipeline.llm_extract import LLMExtractor
    from engram.pipeline.run import Pipeline

    pipeline = Pipeline(LLMExtractor(ScriptedLLM([answer] * 4)))
    with Memory.open(str(tmp_path / "m.db"), embedder=FakeHashEmbedder(), pipeline=pipeline) as memory:
        graph = build_memory_graph(ScriptedChatModel(script=[AIMessage("Noted.")]), memory,
                                   checkpointer=InMemorySaver())
        out: list[str] = []
        lines = iter(["Remember that I live in Lisbon.", "/exit"])
        chat_loop(graph, "ana", "t1", read=lambda: next(lines), write=lambda text, **_: out.append(str(text)))
        assert memory.list(Scope("default", ("users", "ana"))).items == ()  # nothing was stored …
    assert out[0] == "Noted."
    assert any("extraction failed" in line for line in out), out  # … and the chat says so
