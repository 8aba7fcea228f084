"""``python -m engram.benchmark bench ...``: the same command as ``engram bench``."""

from __future__ import annotations

import typer

from .command import register

app = typer.Typer(add_completion=False, help="engram benchmarks")
register(app)


@app.callback()
def _main() -> None:
    """Keeps `bench` a subcommand, as under `engram`."""


if __name__ == "__main__":
    app()
