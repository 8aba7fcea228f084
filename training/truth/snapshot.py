"""Copy the writers' files into ``data/`` (complete lines only: a writer may be mid-append).

    python -m training.truth.snapshot /work/data27
"""

from __future__ import annotations

import sys
from pathlib import Path

from .dataset import DATA

FILES = ("statements.jsonl", "pairs.jsonl", "everyday_requests.jsonl", "forgets.jsonl")


def copy_complete_lines(source: Path, target: Path) -> int:
    raw = source.read_bytes()
    complete = raw[: raw.rfind(b"\n") + 1]
    target.write_bytes(complete)
    return complete.count(b"\n")


def main() -> None:
    root = Path(sys.argv[1])
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        for name in FILES:
            if (folder / name).exists():
                (DATA / folder.name).mkdir(parents=True, exist_ok=True)
                count = copy_complete_lines(folder / name, DATA / folder.name / name)
                print(f"{folder.name}/{name}: {count} lines")


if __name__ == "__main__":
    main()
