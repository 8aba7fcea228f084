"""Recall@k curves per dataset from `engram eval` results files, as one PNG.

    python bench/plots_retrieval.py bench/results/locomo-usem3.json ... -o docs/retrieval_recall.png

Each results file becomes one panel (LongMemEval: one panel per level), with a
curve per retriever of the dataset's headline metric against k. Needs matplotlib
(a bench-only dependency: pip install matplotlib).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def panels(results: dict, ablations: bool = False) -> list[tuple[str, dict[str, list[tuple[int, float]]]]]:
    """(title, {retriever: [(k, value)]}) for each panel of one results file;
    ablation runs (labels starting with "-") are left out unless asked for."""
    headline = results["headline"]
    name = results["dataset"] + (f" {results['language']}" if results.get("language") else "")
    name += f" · {results['embedder']}"
    levels = ["session", "turn"] if results["dataset"] == "longmemeval" else [None]
    out = []
    for level in levels:
        curves = {}
        for retriever, summary in results["retrievers"].items():
            if retriever.startswith("-") and not ablations:
                continue
            values = summary["overall"][level] if level else summary["overall"]
            curves[retriever] = [(k, values[f"{headline}@{k}"]) for k in results["ks"]]
        title = f"{name}\n{level + ' ' if level else ''}{headline}@k"
        out.append((title, curves))
    return out


def plot(files: list[Path], output: Path, ablations: bool = False) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    all_panels = [panel for file in files for panel in panels(json.loads(file.read_text(encoding="utf-8")), ablations)]
    columns = min(3, len(all_panels))
    rows = (len(all_panels) + columns - 1) // columns
    figure, axes = plt.subplots(rows, columns, figsize=(5 * columns, 3.8 * rows), squeeze=False)
    for axis, (title, curves) in zip(axes.flat, all_panels):
        for retriever, points in curves.items():
            ks, values = zip(*points)
            style = {"bm25": "--", "vector": ":"}.get(retriever, "-")
            axis.plot(ks, values, style, marker="o", markersize=3, label=retriever.split(":")[0])
        axis.set_title(title, fontsize=9)
        axis.set_xlabel("k")
        axis.set_ylim(0, 1)
        axis.set_xscale("log")
        axis.set_xticks([k for k, _ in next(iter(curves.values()))])
        axis.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
        axis.grid(alpha=0.3)
        axis.legend(fontsize=7, loc="lower right")
    for axis in list(axes.flat)[len(all_panels):]:
        axis.set_visible(False)
    figure.tight_layout()
    output.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(output, dpi=80)
    print(f"wrote {output}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", type=Path, help="results JSON files written by `engram eval`")
    parser.add_argument("-o", "--output", type=Path, default=Path("docs/retrieval_recall.png"))
    parser.add_argument("--ablations", action="store_true", help="also draw the one-change variants")
    args = parser.parse_args()
    plot(args.results, args.output, args.ablations)


if __name__ == "__main__":
    main()
