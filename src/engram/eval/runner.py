"""Run a retrieval benchmark through engram itself and write the results.

Each unit (conversation, question, user) is indexed with ``Memory.remember_many``
into its own scope of a temporary SQLite file and queried with ``Memory.search``,
so the numbers measure the product. Every run also measures the BM25-only and
vector-only baselines on the same index, so improvements are ratios from one
run. Progress is checkpointed per unit (one file each, written atomically); an
interrupted run resumes where it stopped, and the results file is replaced
atomically at the end.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pydantic

from ..config import Settings
from ..embed import ENSEMBLE, ENSEMBLE_PARTS, Embedder, EnsembleEmbedder, make_embedder
from ..errors import BenchmarkDataError, ConfigError
from ..memory import Memory, open_store_for
from ..model import Kind, Scope, Source
from ..pii import PIIPolicy
from ..writes import MemoryDraft
from . import metrics
from .cache import CachedEmbedder
from .data import Dataset, Doc, Query, Unit, load

BASELINES = ("bm25", "vector")
# Public benchmark text is indexed as given: masking would change what is retrieved, and a
# forbidden kind (LongMemEval_S haystacks hold password-like strings) would stop the run.
BENCHMARK_PII = PIIPolicy(default="allow", actions={})
PLAIN = {"neighbour_weight": 0.0, "thread_weight": 0.0, "time_weight": 0.0, "query_rewrite": False}
TENANT = "eval"
INDEX_FIELDS = frozenset({"embedder", "cjk_tokenizer", "db", "max_content_chars", "reply_context"})
METRICS = {
    "locomo": ("recall", "hit"),
    "longmemeval": ("recall_all", "ndcg_any", "recall_any"),
    "madial": ("recall", "hit", "ndcg_any"),
}
HEADLINE = {"locomo": "recall", "longmemeval": "recall_all", "madial": "recall"}


@dataclass(frozen=True, slots=True)
class RetrieverSpec:
    """A named retrieval configuration: a base retriever plus Settings overrides."""

    name: str
    overrides: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str) -> RetrieverSpec:
        """``hybrid``, ``bm25``, ``vector`` or ``label:key=value,key=value`` where the
        keys are Settings fields (e.g. ``hybrid:fusion=rrf,lexical_weight=0.3``)."""
        text = text.strip()
        base, _, rest = text.partition(":")
        overrides: dict[str, Any] = {}
        if base in ("hybrid", "bm25", "vector"):
            overrides["retriever"] = base
        if text in BASELINES:  # the baselines are plain: no lifts, no query rewriting
            overrides.update({key: value for key, value in PLAIN.items() if key in Settings.model_fields})
        for part in filter(None, (p.strip() for p in rest.split(","))):
            key, eq, value = part.partition("=")
            if not eq:
                raise ConfigError(f"retriever option {part!r} should be key=value")
            key = key.strip()
            if key not in Settings.model_fields:
                raise ConfigError(f"unknown setting {key!r} in retriever {text!r}")
            if key in INDEX_FIELDS:
                raise ConfigError(f"{key} changes the index; pass it as a run option, not per retriever")
            overrides[key] = value.strip()
        return cls(text, overrides)


def parse_retrievers(texts: Sequence[str]) -> list[RetrieverSpec]:
    """Requested retrievers, comma lists allowed for plain names, baselines always added."""
    names: list[str] = []
    for text in texts:
        names += [t for t in text.split(",") if t.strip()] if ":" not in text else [text]
    names += [b for b in BASELINES if b not in names]
    specs = [RetrieverSpec.parse(name) for name in dict.fromkeys(n.strip() for n in names)]
    return specs


@dataclass(frozen=True)
class EvalConfig:
    dataset: str
    data: Path
    ks: tuple[int, ...] = (1, 5, 10)
    retrievers: tuple[str, ...] = ("hybrid",)
    embedder: str | None = None  # None: engram's default
    cjk_tokenizer: str | None = None
    out: Path | None = None
    cache_dir: Path | None = None
    limit_units: int | None = None
    limit_queries: int | None = None  # per unit
    restart: bool = False
    options: Mapping[str, Any] = field(default_factory=dict)  # loader options (e.g. LongMemEval roles)
    settings: Mapping[str, Any] = field(default_factory=dict)  # base Settings overrides for every retriever

    def base_settings(self, db: str) -> Settings:
        values: dict[str, Any] = {"db": db, "max_content_chars": 1_000_000, "record_recalls": False, **self.settings}
        if self.embedder:
            values["embedder"] = self.embedder
        if self.cjk_tokenizer:
            values["cjk_tokenizer"] = self.cjk_tokenizer
        return Settings(**values)


class DatasetClock:
    """'Now' for a benchmark: the moment its questions are asked (or just after the
    last thing said), so validity windows and recency see the data's own dates."""

    def __init__(self) -> None:
        self.moment = datetime.now(UTC)

    def now(self) -> datetime:
        return self.moment


def results_path(config: EvalConfig, dataset: Dataset, embedder: str) -> Path:
    if config.out is not None:
        return Path(config.out)
    lang = dataset.notes.get("language")
    stem = f"{config.dataset}-{lang}" if lang else config.dataset
    return Path("bench/results") / f"{stem}-{embedder}.json"


def _atomic_write(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(data, out, ensure_ascii=False, indent=1)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _fingerprint(config: EvalConfig, specs: Sequence[RetrieverSpec], settings: Settings, data: Path) -> dict:
    stat = data.stat()
    return {
        "dataset": config.dataset,
        "data": str(data.resolve()),
        "data_size": stat.st_size,
        "data_mtime": int(stat.st_mtime),
        "ks": list(config.ks),
        "retrievers": {spec.name: dict(spec.overrides) for spec in specs},
        "settings": {k: v for k, v in settings.model_dump().items() if k not in ("db",)},
        "limit_units": config.limit_units,
        "limit_queries": config.limit_queries,
        "options": dict(config.options),
    }


class Checkpoint:
    """One JSON file per finished unit beside the results file, plus the run's
    fingerprint; a resume only reuses units measured with the same configuration."""

    def __init__(self, results: Path, fingerprint: dict, restart: bool) -> None:
        self.folder = results.with_name(results.name + ".parts")
        key = self.folder / "run.json"
        if restart and self.folder.exists():
            shutil.rmtree(self.folder)
        if key.exists():
            try:
                stored = json.loads(key.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError):
                stored = None
            if stored != fingerprint:
                raise ConfigError(
                    f"{self.folder} holds a run with other settings; pass --restart to discard it or choose --out"
                )
        else:
            _atomic_write(key, fingerprint)

    def _file(self, unit_id: str) -> Path:
        digest = hashlib.sha1(unit_id.encode()).hexdigest()[:10]
        safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in unit_id)[:60]
        return self.folder / f"{safe}-{digest}.json"

    def load(self, unit_id: str) -> list[dict] | None:
        file = self._file(unit_id)
        if not file.exists():
            return None
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return None  # a torn file is simply measured again
        return data.get("queries") if data.get("unit") == unit_id else None

    def save(self, unit_id: str, rows: list[dict]) -> None:
        _atomic_write(self._file(unit_id), {"unit": unit_id, "queries": rows})

    def discard(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def doc_draft(unit: Unit, doc: Doc) -> MemoryDraft:
    # a stable id keeps ties in the ranking (broken by id) the same from run to run
    record_id = hashlib.sha256(f"{unit.id}\x00{doc.id}".encode()).hexdigest()[:32]
    return MemoryDraft(
        doc.text,
        id=record_id,
        kind=Kind.EPISODE,
        metadata={**doc.metadata, "doc_id": doc.id, "position": doc.position},
        valid_from=doc.at,
        source=Source(actor=str(doc.metadata.get("speaker") or doc.metadata.get("role") or "user"),
                      thread_id=doc.group, message_id=doc.id),
    )


def unit_now(unit: Unit) -> datetime:
    """When the unit's questions are asked: the question date where the data gives
    one (LongMemEval; it dates a few sessions later on the question's own day, so
    'now' is never before the last thing said), else the real now, so that
    "yesterday" in an undated question matches nothing rather than a guess."""
    asked = [q.at for q in unit.queries if q.at is not None]
    if not asked:
        return datetime.now(UTC)
    said = [d.at for d in unit.docs if d.at is not None]
    return max([*asked, *said]) + timedelta(minutes=1)


def score_query(dataset: str, query: Query, ranked: list[str], group_of: Mapping[str, str],
                ks: Sequence[int]) -> dict:
    names = METRICS[dataset]
    if dataset == "longmemeval":
        sessions = metrics.group_ranking(ranked, lambda doc_id: group_of.get(doc_id, doc_id))
        return {
            "turn": metrics.query_metrics(ranked, query.gold, ks, names),
            "session": metrics.query_metrics(sessions, query.gold_groups, ks, names),
        }
    return metrics.query_metrics(ranked, query.gold, ks, names)


def search_depth(dataset: str, ks: Sequence[int]) -> int:
    # LongMemEval's session metrics need enough turns to cover k distinct sessions.
    return max(max(ks) * 5, 50) if dataset == "longmemeval" else max(ks)


@dataclass
class UnitRunner:
    config: EvalConfig
    specs: Sequence[RetrieverSpec]
    base: Settings
    memories: dict[str, Memory]
    clock: DatasetClock

    def run(self, unit: Unit, queries: Sequence[Query], progress: Callable[[int], None]) -> list[dict]:
        any_memory = next(iter(self.memories.values()))
        scope = Scope(TENANT, (self.config.dataset, unit.id))
        self.clock.moment = unit_now(unit)
        any_memory.purge_scope(scope, actor="eval")
        any_memory.remember_many([doc_draft(unit, doc) for doc in unit.docs], scope, actor="eval")
        group_of = {doc.id: doc.group or doc.id for doc in unit.docs}
        depth = search_depth(self.config.dataset, self.config.ks)
        rows = []
        for query in queries:
            row: dict[str, Any] = {"id": query.id, "category": query.category, "retrievers": {}}
            for spec in self.specs:
                started = time.perf_counter()
                hits = self.memories[spec.name].search(query.text, scope, k=depth)
                elapsed = time.perf_counter() - started
                ranked = [str(hit.record.metadata.get("doc_id")) for hit in hits]
                row["retrievers"][spec.name] = {
                    "metrics": score_query(self.config.dataset, query, ranked, group_of, self.config.ks),
                    "top": ranked[: max(self.config.ks)],
                    "ms": round(elapsed * 1000, 2),
                }
            rows.append(row)
            progress(1)
        # FTS5's BM25 statistics span the whole table, not one scope: each unit is
        # measured alone, so a resumed run ranks exactly as an uninterrupted one.
        any_memory.purge_scope(scope, actor="eval")
        return rows


def _variant(base: Settings, spec: RetrieverSpec) -> Settings:
    try:
        return Settings(**{**base.model_dump(), **spec.overrides})
    except pydantic.ValidationError as exc:
        raise ConfigError(f"retriever {spec.name!r}: {exc}") from None


def make_eval_embedder(name: str, cache_dir: Path | None) -> Embedder:
    if name == ENSEMBLE:  # each part cached on its own, so single-model runs share the cache
        return EnsembleEmbedder([CachedEmbedder(make_embedder(part), cache_dir) for part in ENSEMBLE_PARTS])
    return CachedEmbedder(make_embedder(name), cache_dir)


Progress = Callable[[str, int, int], Callable[[int], None]]


def run_eval(config: EvalConfig, *, progress: Progress | None = None,
             embedder: Embedder | None = None) -> dict:
    """Measure every retriever on one dataset; returns (and writes) the results."""
    if config.dataset not in METRICS:
        raise BenchmarkDataError(f"unknown benchmark {config.dataset!r}; use one of {', '.join(METRICS)}")
    if not config.ks or any(k <= 0 for k in config.ks):
        raise ConfigError("k values must be positive integers")
    dataset = load(config.dataset, config.data, **config.options)
    specs = parse_retrievers(config.retrievers)
    workdir = Path(tempfile.mkdtemp(prefix="engram-eval-"))
    try:
        base = config.base_settings(str(workdir / "index.db"))
        embedder = embedder or make_eval_embedder(base.embedder, config.cache_dir)
        out = results_path(config, dataset, embedder.name)
        checkpoint = Checkpoint(out, _fingerprint(config, specs, base, Path(dataset.path)), config.restart)
        units = list(dataset.units[: config.limit_units] if config.limit_units else dataset.units)
        chosen = [(u, list(u.queries[: config.limit_queries] if config.limit_queries else u.queries)) for u in units]
        total = sum(len(queries) for _, queries in chosen)
        clock = DatasetClock()
        store = open_store_for(base)
        first = Memory(store, embedder=embedder, settings=base, clock=clock, pii=BENCHMARK_PII)
        tokenizer = first.tokenizer.name  # what the index's terms come from (the store's tokenizer)
        memories = {spec.name: Memory(store, embedder=embedder, settings=_variant(base, spec), clock=clock,
                                      pii=BENCHMARK_PII) for spec in specs}
        runner = UnitRunner(config, specs, base, memories, clock)
        advance = progress(config.dataset, total, len(units)) if progress else (lambda n: None)
        rows: list[dict] = []
        started = time.perf_counter()
        resumed = 0
        try:
            for unit, queries in chosen:
                done = checkpoint.load(unit.id)
                if done is None:
                    done = runner.run(unit, queries, advance)
                    checkpoint.save(unit.id, done)
                else:
                    resumed += 1
                    advance(len(done))
                rows += done
        finally:
            first.close()
        results = summarize_run(config, dataset, specs, base, embedder.name, rows, len(units))
        results["cjk_tokenizer"] = tokenizer
        results["run"] = {"seconds": round(time.perf_counter() - started, 1), "units_resumed": resumed,
                          "results_file": str(out)}
        _atomic_write(out, results)
        checkpoint.discard()
        return results
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def summarize_run(config: EvalConfig, dataset: Dataset, specs: Sequence[RetrieverSpec], base: Settings,
                  embedder: str, rows: list[dict], n_units: int) -> dict:
    per_retriever = {}
    for spec in specs:
        flat = [{"category": row["category"], "metrics": row["retrievers"][spec.name]["metrics"]} for row in rows]
        summary = metrics.summarize(flat)
        latencies = sorted(row["retrievers"][spec.name]["ms"] for row in rows)
        summary["search_ms_p50"] = latencies[len(latencies) // 2] if latencies else None
        summary["settings"] = dict(spec.overrides)
        per_retriever[spec.name] = summary
    return {
        "dataset": config.dataset,
        "data": dataset.path,
        "language": dataset.notes.get("language"),
        "embedder": embedder,
        "cjk_tokenizer": base.cjk_tokenizer,
        "ks": list(config.ks),
        "headline": HEADLINE[config.dataset],
        "units": n_units,
        "queries": len(rows),
        "notes": dict(dataset.notes),
        "defaults": {k: v for k, v in base.model_dump().items() if k not in ("db",)},
        "retrievers": per_retriever,
        "ratios": ratios(config.dataset, per_retriever, config.ks),
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "per_query": rows,
    }


def _overall(summary: Mapping, dataset: str) -> Mapping[str, float]:
    overall = summary["overall"]
    if dataset == "longmemeval":
        return {f"{level}.{key}": value for level, values in overall.items() for key, value in values.items()}
    return overall


def ratios(dataset: str, per_retriever: Mapping[str, Mapping], ks: Sequence[int]) -> dict:
    """Each retriever's headline metrics divided by the BM25 and vector baselines'."""
    out: dict[str, dict] = {}
    for name, summary in per_retriever.items():
        if name in BASELINES:
            continue
        mine = _overall(summary, dataset)
        for baseline in BASELINES:
            theirs = _overall(per_retriever[baseline], dataset)
            out[f"{name}/{baseline}"] = {
                key: round(value / theirs[key], 4) if theirs.get(key) else None
                for key, value in mine.items() if HEADLINE[dataset] in key.split(".")[-1]
            }
    return out
