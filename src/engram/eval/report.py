"""Results → tables: rich tables for the terminal, Markdown for docs/BENCHMARKS.md."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

LOCOMO_CATEGORIES = {"1": "multi-hop", "2": "temporal", "3": "open-domain", "4": "single-hop", "5": "adversarial"}


def _levels(results: Mapping[str, Any]) -> list[str | None]:
    return ["session", "turn"] if results["dataset"] == "longmemeval" else [None]


def _metric_names(results: Mapping[str, Any]) -> list[str]:
    first = next(iter(results["retrievers"].values()))["overall"]
    if results["dataset"] == "longmemeval":
        first = first["turn"]
    return list(first)


def _value(block: Mapping[str, Any], level: str | None, key: str) -> float | None:
    values = block[level] if level else block
    return values.get(key)


def overall_rows(results: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    """One row per retriever; columns = every metric@k (per level for LongMemEval)."""
    header = ["retriever"]
    columns: list[tuple[str | None, str]] = []
    for level in _levels(results):
        for key in _metric_names(results):
            columns.append((level, key))
            header.append(f"{level[0]}.{key}" if level else key)
    header.append("p50 ms")
    rows = []
    for name, summary in results["retrievers"].items():
        cells = [name]
        for level, key in columns:
            value = _value(summary["overall"], level, key)
            cells.append("" if value is None else f"{value:.3f}")
        ms = summary.get("search_ms_p50")
        cells.append("" if ms is None else f"{ms:.1f}")
        rows.append(cells)
    return header, rows


def category_rows(results: Mapping[str, Any], ks: Sequence[int] | None = None) -> tuple[list[str], list[list[str]]]:
    """Headline metric per category (rows) and retriever × k (columns)."""
    dataset = results["dataset"]
    headline = results["headline"]
    ks = list(ks or [k for k in results["ks"] if k >= 5][:2] or results["ks"][-1:])
    level = "session" if dataset == "longmemeval" else None
    names = list(results["retrievers"])
    header = ["category", "n"] + [f"{name} @{k}" for name in names for k in ks]
    first = results["retrievers"][names[0]]["by_category"]
    rows = []
    for category, block in first.items():
        label = LOCOMO_CATEGORIES.get(category, category) if dataset == "locomo" else category
        cells = [label, str(block["n"])]
        for name in names:
            cat = results["retrievers"][name]["by_category"][category]
            for k in ks:
                value = _value(cat, level, f"{headline}@{k}")
                cells.append("" if value is None else f"{value:.3f}")
        rows.append(cells)
    return header, rows


def rich_tables(results: Mapping[str, Any]) -> list[Any]:
    from rich.table import Table

    title = f"{results['dataset']}" + (f" ({results['language']})" if results.get("language") else "")
    title += f" · {results['queries']} queries · embedder {results['embedder']}"
    tables = []
    for heading, (header, rows) in ((title, overall_rows(results)),
                                    (f"{title} · {_category_caption(results)}", category_rows(results))):
        table = Table(title=heading)
        for column in header:
            table.add_column(column, justify="left" if column in ("retriever", "category") else "right")
        for row in rows:
            table.add_row(*row)
        tables.append(table)
    return tables


def _category_caption(results: Mapping[str, Any]) -> str:
    level = "session " if results["dataset"] == "longmemeval" else ""
    return f"{level}{results['headline']} by category"


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def markdown(results: Mapping[str, Any]) -> str:
    parts = [markdown_table(*overall_rows(results)), "", f"*{_category_caption(results)}:*", "",
             markdown_table(*category_rows(results))]
    return "\n".join(parts)
