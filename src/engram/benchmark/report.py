"""Tables of benchmark results: rich for the terminal, Markdown for docs/BENCHMARKS.md."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from rich.table import Table

from .speed import MANY_USERS_TARGETS, TARGETS, ratios
from .systems import ENGRAM

SPEED_COLUMNS = ("system", "writes/s", "search p50 ms", "p95 ms", "p99 ms", "CPU p50 / p95 ms", "hit@k", "p50 × engram",
                 "beyond embedding p50 / p95 ms", "RSS MB / 100k", "anon MB growth / file MB", "disk MB / 100k")
COLD_COLUMN = "cold p50 / p95 ms"  # the many-users workload: each user's first query


def speed_columns(run: dict[str, Any]) -> tuple[str, ...]:
    cold = any("cold_search" in result for result in run["systems"].values())
    return (*SPEED_COLUMNS[:6], COLD_COLUMN, *SPEED_COLUMNS[6:]) if cold else SPEED_COLUMNS


def _num(value: float | None, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:,.{digits}f}"


def speed_rows(run: dict[str, Any]) -> list[list[str]]:
    ratio = ratios(run)
    columns = speed_columns(run)
    rows = []
    for name, result in run["systems"].items():
        if result["status"] != "ok":
            rows.append([name, f"{result['status']}: {result.get('reason', '')}"] + [""] * (len(columns) - 2))
            continue
        search = result.get("search", {})
        write = result.get("write", {})
        rows.append([
            name,
            _num(write.get("per_s"), 0),
            _num(search.get("p50_ms")),
            _num(search.get("p95_ms")),
            _num(search.get("p99_ms")),
            _cpu(result),
            *([_cold(result)] if COLD_COLUMN in columns else []),
            _num(search.get("hit_at_k"), 2),
            "1.00" if name == ENGRAM else _num(ratio.get(name, {}).get("search_p50"), 2),
            _own(result),
            _num(result.get("rss_mb_per_100k"), 0),
            _memory(result),
            _num(result.get("disk_mb_per_100k"), 0) if result.get("disk_bytes") else "in memory",
        ])
    return rows


def _own(result: dict[str, Any]) -> str:
    own = result.get("search_beyond_embedding")
    return f"{_num(own['p50_ms'], 2)} / {_num(own['p95_ms'], 2)}" if own else "–"


def _cpu(result: dict[str, Any]) -> str:
    cpu = result.get("search_cpu")
    return f"{_num(cpu['p50_ms'], 2)} / {_num(cpu['p95_ms'], 2)}" if cpu else "–"


def _memory(result: dict[str, Any]) -> str:
    if "anon_growth_mb" not in result:
        return "–"
    return f"+{_num(result['anon_growth_mb'], 0)} / {_num(result.get('file_mb', {}).get('after_search'), 0)}"


def _cold(result: dict[str, Any]) -> str:
    cold = result.get("cold_search")
    return f"{_num(cold['p50_ms'])} / {_num(cold['p95_ms'])}" if cold else "–"


def speed_table(run: dict[str, Any]) -> Table:
    table = Table(title=f"{run['size']:,} memories ({run['users']} users × {run['per_user']:,})")
    for column in speed_columns(run):
        table.add_column(column, justify="left" if column == "system" else "right")
    for row in speed_rows(run):
        table.add_row(*row)
    return table


def verdict_lines(results: dict[str, Any]) -> list[str]:
    verdict = results.get("verdict", {})
    lines = []
    many = verdict.get("many_users")
    if many:
        t = MANY_USERS_TARGETS
        lines.append(
            f"many-users at {TARGETS['size']:,} (issue 22: p50 and p95 ≤ {t['vs_sqlitestore']:g}× SqliteStore's, "
            f"p50 ≤ {t['p50_vs_floor']:g}× the numpy floor, beyond the embedding p50 ≤ {t['own_p50_ms']:g} ms and "
            f"p95 ≤ {t['own_p95_ms']:g} ms, cold p95 ≤ {t['cold_p95_vs_warm_p95']:g}× warm p95, anonymous memory "
            f"growth ≤ {t['anon_growth_mb']:g} MB): "
            + ", ".join(f"{key} {value:.2f}" if isinstance(value, float) else f"{key} {value}"
                        for key, value in many.items())
        )
    if "search_met" in verdict:
        lines.append(
            f"search on {TARGETS['size']:,} (target p50 ≤ {TARGETS['search_p50_ms']:g} ms, p95 ≤ "
            f"{TARGETS['search_p95_ms']:g} ms): p50 {verdict['search_p50_ms']:.1f} ms, p95 "
            f"{verdict['search_p95_ms']:.1f} ms — {'met' if verdict['search_met'] else 'NOT met'}"
        )
    if "write_met" in verdict:
        rates = ", ".join(f"{int(size):,}: {rate:,.0f}/s" for size, rate in verdict["write_per_s"].items())
        lines.append(
            f"batched writes, embeddings included (target ≥ {TARGETS['write_per_s']:,.0f}/s): {rates} — "
            f"{'met' if verdict['write_met'] else 'NOT met'}"
        )
    return lines


def _markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    align = ["---"] + ["---:"] * (len(header) - 1)
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def speed_markdown(results: dict[str, Any]) -> str:
    parts = []
    for run in results["runs"]:
        parts.append(f"**{run['size']:,} memories** ({run['users']} users × {run['per_user']:,}, "
                     f"{results['config']['queries']} user-scoped queries, k={results['config']['k']})\n")
        parts.append(_markdown_table(speed_columns(run), speed_rows(run)))
        parts.append("")
    lines = verdict_lines(results)
    if lines:
        parts.append("\n".join(f"- {line}" for line in lines))
    return "\n".join(parts).rstrip() + "\n"


CONCURRENCY_COLUMNS = ("writers", "readers", "seconds", "acknowledged writes", "lost", "lock errors",
                       "other errors", "writes/s", "write ms p50 / p95 / p99 / max", "reads/s",
                       "read ms p50 / p95 / p99 / max")


def _spread(latency: dict[str, Any]) -> str:
    return " / ".join(_num(latency[key]) for key in ("p50_ms", "p95_ms", "p99_ms", "max_ms"))


def concurrency_row(result: dict[str, Any]) -> list[str]:
    config = result["config"]
    w, r = result["write_latency"], result["read_latency"]
    return [
        str(config["writers"]), str(config["readers"]), f"{config['seconds']:g}",
        f"{result['acknowledged_writes']:,}", str(result["lost_writes"] + result["wrong_content"]),
        str(result["lock_errors"]), str(result["other_errors"]),
        _num(result["writes_per_s"], 0), _spread(w), _num(result["reads_per_s"], 0), _spread(r),
    ]


def concurrency_table(result: dict[str, Any]) -> Table:
    config = result["config"]
    table = Table(title=f"{config['writers']} writers + {config['readers']} readers on one SQLite file "
                        f"({config['seconds']:g} s, embedder {config['embedder']})")
    table.add_column("measure")
    table.add_column("value", justify="right")
    for label, value in zip(CONCURRENCY_COLUMNS[3:], concurrency_row(result)[3:]):
        table.add_row(label, value)
    return table


def concurrency_markdown(results: Sequence[dict[str, Any]]) -> str:
    rows = [[r["config"]["embedder"], *concurrency_row(r)] for r in results]
    return _markdown_table(("embedder", *CONCURRENCY_COLUMNS), rows) + "\n"
