"""The distribution's name: `engram` on PyPI is another project, so a release is
`engram-agentmem`; `import engram` and the `engram` command stay, and every install
hint (docs, error messages, the extras' own references) names the distribution."""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NAME = "engram-agentmem"
EXTRA = re.compile(r"(?<![\w-])([A-Za-z][\w.-]*)\[[a-z][a-z,]*\]")  # name[extra,…] as pip reads it


def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_the_distribution_is_named_apart_and_keeps_the_command():
    assert project()["name"] == NAME
    assert project()["scripts"] == {"engram": "engram.cli:main"}
    assert (ROOT / "src" / "engram" / "__init__.py").exists()  # import engram


def test_every_install_hint_names_the_distribution():
    extras = project()["optional-dependencies"]
    self_refs = [req for reqs in extras.values() for req in reqs if req.split("[")[0] in ("engram", NAME)]
    assert self_refs and all(req.startswith(f"{NAME}[") for req in self_refs)
    files = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "src").rglob("*.py")]
    wrong = [(f.name, m.group(0)) for f in files for m in EXTRA.finditer(f.read_text(encoding="utf-8"))
             if m.group(1) == "engram"]
    assert wrong == []
