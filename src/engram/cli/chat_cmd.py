"""`engram chat --user ID`: talk to any OpenAI-compatible model with engram memory.

The loop runs engram's memory graph (recall → agent → extract → save): memories
are recalled into the prompt, new facts are extracted after each turn, and the
thread is kept by a LangGraph checkpointer beside the engram database.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Annotated, Any

import typer

from ..config import Settings
from ..errors import ConfigError, EngramError
from .common import DbOption, TenantOption, console, errors, run

SETUP_HINT = (
    "engram chat needs a chat model. Set LLM_MODEL (e.g. gpt-4o-mini) and OPENAI_API_KEY; "
    "for a local or other OpenAI-compatible server also set OPENAI_BASE_URL (e.g. http://localhost:11434/v1)."
)
EXIT_WORDS = frozenset({"/exit", "/quit", "exit", "quit"})


def chat(
    user: Annotated[str, typer.Option("--user", "-u", help="Your user id: memories live under users/<id>")],
    thread: Annotated[str | None, typer.Option("--thread", help="Continue a thread (default: a new one)")] = None,
    db: DbOption = None,
    tenant: TenantOption = "default",
    last_n: Annotated[int, typer.Option("--last-n", help="Messages of the thread sent to the model")] = 20,
    budget: Annotated[int, typer.Option("--budget", help="Token budget of the recalled memory block")] = 800,
) -> None:
    """Chat with memory. Type /exit (or Ctrl-D) to leave."""
    try:
        from ..integrations.langgraph.chat_model import chat_model_from_env, llm_from_env
        from ..integrations.langgraph.checkpoint import close_checkpointer, default_checkpointer
        from ..integrations.langgraph.graph import build_memory_graph
    except ImportError as exc:
        errors.print(f"[red]error:[/red] engram chat needs LangGraph: pip install 'engram-agentmem[langgraph]' ({exc})")
        raise typer.Exit(2) from None
    try:
        model = chat_model_from_env()
        llm = llm_from_env()
    except ConfigError as exc:
        errors.print(f"[red]error:[/red] {exc}\n{SETUP_HINT}")
        raise typer.Exit(2) from None

    from ..memory import Memory

    memory = run(lambda: Memory.open(db, settings=Settings(), llm=llm))
    saver = run(lambda: default_checkpointer(memory))
    try:
        # a fact an approval rule holds waits for a reviewer (`engram approvals`), not for the chat
        graph = run(lambda: build_memory_graph(model, memory, checkpointer=saver, tenant=tenant, last_n=last_n,
                                               budget_tokens=budget, actor=f"chat:{user}", approvals="queue"))
        thread_id = thread or uuid.uuid4().hex[:12]
        console.print(f"[dim]engram chat · user {user} · thread {thread_id} · /exit to leave[/dim]")
        chat_loop(graph, user, thread_id, read=_read_line, write=console.print)
    finally:
        close_checkpointer(saver)
        memory.close()


def chat_loop(graph: Any, user: str, thread_id: str, *, read: Callable[[], str | None],
              write: Callable[..., None]) -> int:
    """Read lines until /exit or end of input; returns the number of turns."""
    config = {"configurable": {"user_id": user, "thread_id": thread_id}}
    turns = 0
    while True:
        line = read()
        if line is None or line.strip() in EXIT_WORDS:
            return turns
        if not line.strip():
            continue
        try:
            state = graph.invoke({"messages": [("user", line)]}, config)
        except EngramError as exc:
            write(f"[red]error:[/red] {type(exc).__name__}: {exc}")
            continue
        except Exception as exc:  # the CLI edge: a provider/network failure must not end the chat
            write(f"[red]error:[/red] the model call failed: {type(exc).__name__}: {exc}")
            continue
        turns += 1
        write(_text(state["messages"][-1].content), markup=False)
        for fact in state.get("remembered") or []:
            write(f"[dim]  remembered: {fact}[/dim]")
        for held in state.get("awaiting") or []:
            write(f"[dim]  awaiting approval: {held['changes'][0]['content']} (engram approvals show {held['id']})"
                  "[/dim]", markup=True)
        if state.get("extraction_error"):
            write(f"[yellow]  nothing was remembered from this turn: extraction failed "
                  f"({state['extraction_error']})[/yellow]")


def _read_line() -> str | None:
    try:
        return input("you> ")
    except EOFError:
        return None


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)


def register(app: typer.Typer) -> None:
    app.command("chat")(chat)
