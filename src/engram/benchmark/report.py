"""Tables of benchmark results: rich for the terminal, Markdown for docs/BENCHMARKS.md."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from rich.table import Table

from .speed import TARGETS, ratios
from .systems import ENGRAM

SPEED_COLUMNS = ("system", "writes/s", "search p50 ms", "p95 ms", "p99 ms", "hit@k", "p50 × engram",
                 "RSS MB / 100k", "disk MB / 100k")


def _num(value: float | None, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:,.{digits}f}"


def speed_rows(run: dict[str, Any]) -> list[list[str]]:
    ratio = ratios(run)
    rows = []
    for name, result in run["systems"].items():
        if result["status"] != "ok":
            rows.append([name, f"{result['status']}: {result.get('reason', '')}"] + [""] * (len(SPEED_COLUMNS) - 2))
            continue
        search = result.get("search", {})
        write = result.get("write", {})
        rows.append([
            name,
            _num(write.get("per_s"), 0),
            _num(search.get("p50_ms")),
            _num(search.get("p95_ms")),
            _num(search.get("p99_ms")),
            _num(search.get("hit_at_k"), 2),
            "1.00" if name == ENGRAM else _num(ratio.get(name, {}).get("search_p50"), 2),
            _num(result.get("rss_mb_per_100k"), 0),
            _num(result.get("disk_mb_per_100k"), 0) if result.get("disk_bytes") else "in memory",
        ])
    return rows


def speed_table(run: dict[str, Any]) -> Table:
    table = Table(title=f"{run['size']:,} memories ({run['users']} users × {run['per_user']:,})")
    for column in SPEED_COLUMNS:
        table.add_column(column, justify="left" if column == "system" else "right")
    for row in speed_rows(run):
        table.add_row(*row)
    return table


def verdict_lines(results: dict[str, Any]) -> list[str]:
    verdict = results.get("verdict", {})
    lines = []
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
        parts.append(_markdown_table(SPEED_COLUMNS, speed_rows(run)))
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
