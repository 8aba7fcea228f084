"""Run the whole reliability suite (the long versions of docs/RELIABILITY.md) on both
backends, one script after the other, and print a Markdown table of the results.

    nice -n 5 python bench/reliability/run_all.py --out /tmp/reliability
    nice -n 5 python bench/reliability/run_all.py --out /tmp/reliability --quick   # minutes, small sizes

Each script also runs on its own (see its --help); ``--langgraph`` adds LangGraph's own
store tests against EngramStore (a checkout of github.com/langchain-ai/langgraph).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import _common  # noqa: E402

LONG = {
    "durability": ["--rounds", "10", "--writers", "4", "--readers", "1", "--seconds", "3"],
    "lost_updates": ["--threads", "8", "--processes", "4", "--times", "15"],
    "tenant_attack": ["--rounds", "3", "--side-documents", "50"],
    "pii_scan": ["--records", "200"],
    "http_fuzz": ["--examples", "100"],
    "stateful_model": ["--examples", "100", "--steps", "40"],
    "llm_faults": ["--repeat", "3", "--call-deadline", "3", "--add-deadline", "6"],
    "search_under_writes": ["--searches", "1000", "--writers", "4"],
    "purge_scan": ["--users", "20"],
    "approval_paths": [],
    "ci_teardown": ["--rounds", "20"],
    "blind_writes": ["--threads", "8", "--times", "25"],
    "files_check": ["--rounds", "10"],
}
QUICK = {
    "durability": ["--rounds", "1", "--writers", "2", "--readers", "1", "--seconds", "1.5"],
    "lost_updates": ["--threads", "4", "--processes", "2", "--times", "4"],
    "tenant_attack": ["--rounds", "1", "--side-documents", "10"],
    "pii_scan": ["--records", "8"],
    "http_fuzz": ["--examples", "3"],
    "stateful_model": ["--examples", "8", "--steps", "15"],
    "llm_faults": ["--repeat", "1", "--call-deadline", "0.5", "--add-deadline", "1"],
    "search_under_writes": ["--searches", "100", "--writers", "2"],
    "purge_scan": ["--users", "2"],
    "approval_paths": [],
    "ci_teardown": ["--rounds", "2"],
    "blind_writes": ["--threads", "4", "--times", "5"],
    "files_check": ["--rounds", "2"],
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="a folder for each script's JSON and log")
    parser.add_argument("--backend", choices=("sqlite", "postgres", "both"), default="both")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", action="append", help="run only these scripts")
    parser.add_argument("--langgraph", help="a LangGraph checkout: also run its store tests against EngramStore")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    plan = QUICK if args.quick else LONG
    status = 0
    for name, options in plan.items():
        if args.only and name not in args.only:
            continue
        started = time.monotonic()
        command = [sys.executable, str(HERE / f"{name}.py"), "--backend", args.backend,
                   "--json", str(out / f"{name}.json"), *options]
        with open(out / f"{name}.log", "w", encoding="utf-8") as log:
            done = subprocess.run(command, env=_common.engram_env(), stdout=log, stderr=subprocess.STDOUT)
        status |= done.returncode
        print(f"{name}: exit {done.returncode} in {time.monotonic() - started:.0f}s (load {os.getloadavg()[0]:.2f})",
              flush=True)
    if args.langgraph:
        for backend in ("sqlite", "postgres") if args.backend == "both" else (args.backend,):
            command = [sys.executable, str(HERE / "langgraph_contract.py"), "--langgraph", args.langgraph]
            if backend == "postgres":
                url, _ = _common._pg_server(None)
                command += ["--postgres", url]
            with open(out / f"langgraph_contract_{backend}.log", "w", encoding="utf-8") as log:
                subprocess.run(command, env=_common.engram_env(), stdout=log, stderr=subprocess.STDOUT)
    print(table(out))
    return status


def table(out: Path) -> str:
    """A Markdown table: one row per script and backend (or fault, or counter)."""
    lines = ["| script | backend | result | figures |", "|---|---|---|---|"]
    for path in sorted(out.glob("*.json")):
        for row in json.loads(path.read_text()):
            figures = {k: v for k, v in row.items() if k not in ("ok", "backend", "details", "failures")}
            shown = json.dumps(figures, ensure_ascii=False, default=str)
            lines.append(f"| {path.stem} | {row.get('backend')} | {'ok' if row.get('ok') else 'FAIL'} | {shown} |")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
