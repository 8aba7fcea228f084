"""The shape of the package, checked on its source (docs/CONCEPTS.md, "One write path"):

- only the write core calls ``store.apply``;
- nothing below the Memory facade imports it (dependencies flow downward);
- the surfaces and integrations reach memory through the facade, never its store;
- no import circle: the modules form a graph without cycles, counting every import
  (a function-local import that breaks a circle is still one);
- the folders keep their layers (docs/ARCHITECTURE.md): no loop between folders, and no
  import up a layer but the ones named there, every import counted.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "engram"
# the facade itself and what sits above it
ABOVE_THE_FACADE = ("memory.py", "aio.py", "__init__.py", "cli/", "server/", "integrations/", "compat/", "eval/", "benchmark/")
# tools that build a Memory over an existing store (benchmarks, evaluation variants)
MAY_HOLD_A_STORE = ("eval/", "benchmark/", "memory.py", "core.py")

# The layers, bottom to top, each a set of folders (a top-level module is a folder of its own;
# "engram" is the package's __init__). A folder may import its own layer and those below it.
LAYERS: tuple[tuple[str, frozenset[str]], ...] = (
    ("values", frozenset({"errors", "clock", "model", "slots", "values", "limits", "writes", "changes",
                          "config_files", "pii", "contention", "replies"})),
    ("text", frozenset({"text"})),
    ("store", frozenset({"store", "filters"})),
    ("providers", frozenset({"embed", "llm"})),
    ("core", frozenset({"core", "reads", "side_fields", "approval_rules"})),
    ("readers", frozenset({"search", "governance", "episodes"})),
    ("producers", frozenset({"pipeline", "maintenance", "consolidation", "jsonl", "config"})),
    ("parts", frozenset({"parts"})),
    ("facade", frozenset({"memory", "aio", "engram"})),
    ("shapes", frozenset({"shapes"})),
    ("tools", frozenset({"eval", "benchmark", "progress"})),
    ("surfaces", frozenset({"cli", "server", "integrations", "compat"})),
)
# imports up a layer that are there on purpose (importer module, imported module): each named,
# with its reason, in docs/ARCHITECTURE.md
NAMED_UP_LAYER_IMPORTS: frozenset[tuple[str, str]] = frozenset()


def modules() -> list[tuple[str, ast.Module]]:
    return [(path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text(encoding="utf-8")))
            for path in sorted(PACKAGE.rglob("*.py"))]


def imported_modules(name: str, tree: ast.Module) -> set[str]:
    """Absolute dotted names of everything a module imports."""
    package = ["engram", *name.removesuffix(".py").split("/")][:-1]
    if name.endswith("__init__.py"):
        package = ["engram", *name.removesuffix("/__init__.py").split("/")] if "/" in name else ["engram"]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *(node.module.split(".") if node.module else [])])
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def module_name(name: str) -> str:
    dotted = "engram." + name.removesuffix(".py").replace("/", ".")
    return dotted.removesuffix(".__init__")


def import_graph() -> dict[str, set[str]]:
    """Each module of the package -> the modules of the package it imports (anywhere in it)."""
    trees = dict(modules())
    known = {module_name(name) for name in trees}

    def owner(dotted: str) -> str | None:  # engram.model.Scope -> engram.model
        while dotted and dotted not in known:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    graph: dict[str, set[str]] = {}
    for name, tree in trees.items():
        this, found = module_name(name), set()
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            single = imported_modules(name, ast.Module(body=[node], type_ignores=[]))
            if isinstance(node, ast.ImportFrom):  # `from . import x` imports x, not the package
                base = min(single, key=len)
                single = {f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names}
            found.update(m for m in map(owner, single) if m and m != this)
        graph[this] = found
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def folder(module: str) -> str:
    """engram.store.sqlite -> store; engram.core -> core; engram -> engram."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "engram"


def folder_imports(graph: dict[str, set[str]]) -> dict[tuple[str, str], set[tuple[str, str]]]:
    """(importing folder, imported folder) -> the module imports behind that folder edge."""
    edges: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for importer, imported in graph.items():
        for target in imported:
            if folder(importer) != folder(target):
                edges.setdefault((folder(importer), folder(target)), set()).add((importer, target))
    return edges


def folder_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    folders: dict[str, set[str]] = {folder(module): set() for module in graph}
    for source, target in folder_imports(graph):
        folders[source].add(target)
    return folders


def layer_of(name: str) -> int:
    return next(i for i, (_, folders) in enumerate(LAYERS) if name in folders)


def up_layer_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Every module import from a folder into a folder of a higher layer."""
    return sorted(pair for (source, target), pairs in folder_imports(graph).items()
                  if layer_of(source) < layer_of(target) for pair in pairs)


def test_no_import_circle():
    assert circles(import_graph()) == []


def test_the_circle_check_finds_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    graph = import_graph()
    assert "engram.model" in graph["engram.memory"] and "engram.memory" not in graph["engram.model"]


def test_only_the_write_core_calls_store_apply():
    callers = sorted(
        name for name, tree in modules()
        if not name.startswith("store/") and any(
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "apply"
            and "store" in ast.unparse(node.func.value).lower()
            for node in ast.walk(tree)
        )
    )
    assert callers == ["core.py"]


def test_nothing_below_the_facade_imports_it():
    below = [name for name, tree in modules()
             if not name.startswith(ABOVE_THE_FACADE) and "engram.memory" in imported_modules(name, tree)]
    assert below == []


def test_surfaces_and_integrations_never_touch_the_store():
    offenders = []
    for name, tree in modules():
        if not name.startswith(ABOVE_THE_FACADE) or name.startswith(MAY_HOLD_A_STORE) or name == "__init__.py":
            continue
        reaches = [ast.unparse(node) for node in ast.walk(tree)
                   if isinstance(node, ast.Attribute) and node.attr in ("store", "core", "_store", "_core")
                   and "memory" in ast.unparse(node.value).lower()]
        imports = [m for m in imported_modules(name, tree) if m.startswith("engram.store") or m == "engram.core"]
        if reaches or imports:
            offenders.append((name, reaches[:2], sorted(imports)[:2]))
    assert offenders == []


def test_memory_keeps_its_store_and_write_core_private(tmp_path):
    from engram import FakeHashEmbedder, Memory

    with Memory.open(str(tmp_path / "m.db"), embedder=FakeHashEmbedder()) as memory:
        assert not hasattr(memory, "store") and not hasattr(memory, "core")
        assert memory._store is memory._core.store  # one store under the verbs and the parts


def test_the_architecture_checks_see_the_package():
    names = [name for name, _ in modules()]
    assert "core.py" in names and "memory.py" in names and len(names) > 50
    assert "engram.memory" in imported_modules("integrations/langgraph/store.py",
                                               dict(modules())["integrations/langgraph/store.py"])


def test_the_folder_checks_see_loops_and_up_layer_imports():
    graph = {"engram.store.base": {"engram.governance.values"}, "engram.governance.values": {"engram.model"},
             "engram.governance.facade": {"engram.store.base"}, "engram.model": set()}
    assert circles(folder_graph(graph)) == [["governance", "store"]]
    assert up_layer_imports(graph) == [("engram.store.base", "engram.governance.values")]


def test_every_folder_has_one_layer():
    declared = [name for _, folders in LAYERS for name in folders]
    assert len(declared) == len(set(declared))
    assert sorted(set(folder_graph(import_graph())) - set(declared)) == []


def test_no_loop_between_folders():
    assert circles(folder_graph(import_graph())) == []


def test_no_import_up_a_layer_but_the_named_ones():
    graph = import_graph()
    assert sorted(set(up_layer_imports(graph)) - NAMED_UP_LAYER_IMPORTS) == []
    assert len(NAMED_UP_LAYER_IMPORTS) <= 2
    for importer, imported in NAMED_UP_LAYER_IMPORTS:  # a named exception that is gone is dropped from the list
        assert imported in graph[importer]


def _methods(protocol: type) -> set[str]:
    return {name for name, value in vars(protocol).items() if callable(value) and not name.startswith("_")}


def test_the_store_contract_is_split_by_role():
    from engram.store.base import STORE_ROLES, Store
    from engram.store.postgres import PostgresStore
    from engram.store.sqlite import SQLiteStore

    roles = {role.__name__: _methods(role) for role in STORE_ROLES}
    assert all(0 < len(methods) <= 12 for methods in roles.values()), {k: len(v) for k, v in roles.items()}
    every = [name for methods in roles.values() for name in methods]
    assert len(every) == len(set(every))  # each method belongs to one role
    assert _methods(Store) == set()  # the union adds nothing of its own
    for backend in (SQLiteStore, PostgresStore):  # each backend implements each role
        assert [name for name in every if not callable(getattr(backend, name, None))] == []


def test_ranking_defaults_are_defined_once():
    from engram.config import Settings
    from engram.search.retrieve import RetrievalSettings

    assert Settings().retrieval() == RetrievalSettings()  # config.py's fields start from RANKING


def test_a_record_is_written_to_json_in_one_place():
    """The record codec (store/codec.py) is the one dict of every record field; the shapes
    and through them the CLI, HTTP and MCP use it."""
    writers = sorted(
        name for name, tree in modules()
        if any(isinstance(node, ast.Dict)
               and {"embedding_model", "superseded_by"} <= {k.value for k in node.keys if isinstance(k, ast.Constant)}
               for node in ast.walk(tree))
    )
    assert writers == ["store/codec.py"]


def _core_store_reaches() -> dict[str, int]:
    """Module -> how often it reaches ``<something>core.store`` (the write core's store)."""
    found: dict[str, int] = {}
    for name, tree in modules():
        count = sum(1 for node in ast.walk(tree) if isinstance(node, ast.Attribute) and node.attr == "store"
                    and ast.unparse(node.value).split(".")[-1] in ("core", "_core"))
        if count:
            found[name] = count
    return found


# code that only reads is given a ReadContext (reads.py); what still reaches the write core's
# store writes too (pipeline/, consolidation/, maintenance, import, jobs, approve, sample, mark).
# 75 reaches in 17 files before the read context (31 in 11, then 18 in 7 after); lower this as more readers move.
CORE_STORE_CEILING = 18


def test_read_only_code_is_given_a_read_context():
    reaches = _core_store_reaches()
    assert sum(reaches.values()) <= CORE_STORE_CEILING, reaches
    readers = ("parts/governance.py", "parts/episodes.py", "governance/recalls.py", "governance/keys.py",
               "episodes/summary.py", "episodes/recorder.py")
    assert [name for name in readers if name in reaches] == []
    graph = import_graph()
    assert all("engram.reads" in graph[module] for module in ("engram.governance.recalls", "engram.parts.operations"))


def test_the_read_context_reads_the_write_cores_store_and_cannot_write(tmp_path):
    from dataclasses import FrozenInstanceError

    import pytest

    from engram import FakeHashEmbedder, Memory
    from engram.reads import ReadContext

    with Memory.open(str(tmp_path / "m.db"), embedder=FakeHashEmbedder()) as memory:
        reads = memory._core.reads
        assert isinstance(reads, ReadContext) and reads.store is memory._store and reads.clock is memory.clock
        assert reads.embedder is memory._core.embedder and reads.tokenizer is memory._core.tokenizer
        with pytest.raises(FrozenInstanceError):
            reads.store = memory._store  # type: ignore[misc]
    writes = {"apply", "commit", "write", "admit", "propose", "enqueue", "record_recall"}
    assert writes.isdisjoint(dir(ReadContext))


CONFORMANCE = PACKAGE.parents[1] / "tests" / "conformance"


def _role_marks(path: Path) -> set[str]:
    """The ``pytest.mark.<name>`` names of a module's ``pytestmark``."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            return {n.attr for n in ast.walk(node.value) if isinstance(n, ast.Attribute)
                    and ast.unparse(n.value) == "pytest.mark"}
    return set()


def test_the_conformance_suite_is_organised_by_store_role():
    """Each conformance module names the store roles it checks (a marker per role), and every
    role has modules: a new backend runs them role by role (docs/ARCHITECTURE.md)."""
    from tests.conformance.conftest import ROLE_MARKERS

    from engram.store.base import STORE_ROLES

    assert sorted(ROLE_MARKERS) == sorted(role.__name__ for role in STORE_ROLES)
    marked = {path.stem: _role_marks(path) for path in sorted(CONFORMANCE.glob("test_*.py"))}
    assert len(marked) > 15
    assert {name: marks for name, marks in marked.items() if not marks or marks - set(ROLE_MARKERS.values())} == {}
    assert {marker for marks in marked.values() for marker in marks} == set(ROLE_MARKERS.values())


def test_architecture_md_lists_the_conformance_modules_of_each_role():
    import re

    marked = {path.stem: _role_marks(path) for path in sorted(CONFORMANCE.glob("test_*.py"))}
    page = (PACKAGE.parents[1] / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    listed = {}
    for marker, modules in re.findall(r"^\| `\w+` \| `(\w+)` \| (.+) \|$", page, flags=re.MULTILINE):
        listed[marker] = set(re.findall(r"`(test_\w+)`", modules))
    by_role = {m: {name for name, marks in marked.items() if m in marks} for ms in marked.values() for m in ms}
    assert listed == by_role
