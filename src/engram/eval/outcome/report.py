"""Outcome results → tables (rich for the terminal, Markdown for docs/BENCHMARKS.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..report import markdown_table

PROBE_COLUMNS = (
    ("needed_in_block", "needed in block"), ("all_needed", "all needed"), ("stale_or_false", "stale/false"),
    ("empty_block", "empty"), ("tokens", "tokens"), ("stored", "stored at all"), ("stale_active", "stale active"),
    ("junk_lines", "junk lines"), ("junk_stored", "junk stored"), ("retired_needed", "needed retired"),
    ("others_as_user", "other's as user's"), ("scenario_sd", "sd (scen.)"),
)
ITEM_COLUMNS = ("utterances", "precision", "recall", "false_memories", "changes_ok", "forgets_ok")


def _cell(value: Any, key: str) -> str:
    if value is None:
        return "–"
    if key == "tokens":
        return f"{value:.0f}"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def probe_rows(block: Mapping[str, Mapping[str, Any]]) -> tuple[list[str], list[list[str]]]:
    header = ["split / lang / facts", "probes"] + [label for _, label in PROBE_COLUMNS]
    rows = [[key.replace("/", " / "), str(fig["probes"])] + [_cell(fig[k], k) for k, _ in PROBE_COLUMNS]
            for key, fig in block.items()]
    return header, rows


def item_rows(block: Mapping[str, Mapping[str, Any]]) -> tuple[list[str], list[list[str]]]:
    header = ["set", "utterances", "precision", "recall", "false memories", "changes ok", "forgets ok",
              "everyday requests retiring"]
    rows = []
    for name, fig in block.items():
        everyday = f"{fig.get('everyday_retiring', 0)}/{fig['everyday']}" if fig.get("everyday") else "–"
        rows.append([name, str(fig["utterances"]), _cell(fig["precision"], ""), _cell(fig["recall"], ""),
                     str(fig["false_memories"]), f"{fig['changes_ok']}/{fig['changes']} "
                     f"(sup {fig['supersede_ok']}, ref {fig['refine_ok']})", f"{fig['forgets_ok']}/{fig['forgets']}",
                     everyday])
    return header, rows


def _tables(results: Mapping[str, Any]) -> list[tuple[str, tuple[list[str], list[list[str]]]]]:
    title = f"outcome · {results['scenarios']} scenarios · budget {results['budget_tokens']} · {results['embedder']}"
    out = [(title, probe_rows(results["summary"])), (f"{title} · by probe kind", probe_rows(results["by_kind"]))]
    if results["utterances"]:
        out.append(("fresh utterances", item_rows(results["utterances"])))
    return out


def rich_tables(results: Mapping[str, Any]) -> list[Any]:
    from rich.table import Table

    tables = []
    for title, (header, rows) in _tables(results):
        table = Table(title=title)
        for index, column in enumerate(header):
            table.add_column(column, justify="left" if index == 0 else "right")
        for row in rows:
            table.add_row(*row)
        tables.append(table)
    return tables


def markdown(results: Mapping[str, Any]) -> str:
    parts: list[str] = []
    for title, (header, rows) in _tables(results):
        parts += [f"*{title}*", "", markdown_table(header, rows), ""]
    return "\n".join(parts)


def misses(results: Mapping[str, Any], limit: int = 50) -> Sequence[str]:
    """One line per probe that missed a needed fact or showed a forbidden one."""
    lines = []
    for p in results["probes"]:
        missing = [f for f in p["needed"] if f not in p["found"]]
        if missing or p["forbidden_in_block"]:
            lines.append(f"{p['scenario']} [{p['mode']}/{p['kind']}] {p['query']!r}: missing {missing} "
                         f"(stored {[f for f in missing if f in p['stored']]}), forbidden {p['forbidden_in_block']}")
    return lines[:limit]
