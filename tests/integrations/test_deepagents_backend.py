"""EngramBackend on its own: the backend protocol, exact text, bad input, permissions,
policies, audit and compare-and-swap."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("deepagents")

from deepagents.backends import CompositeBackend, StateBackend

from engram import PermissionDeniedError, Scope
from engram.integrations.deepagents import (
    EngramBackend,
    SkillFormatError,
    agent_files,
    check_skill,
    forbid_patterns,
    org_policies,
    rate_limit,
    require_approval,
    seed_files,
    seed_skill,
    skills_files,
)


@pytest.fixture
def backend(memory):
    return agent_files(memory, "helper")


def test_write_read_exact_text_and_metadata(backend, memory):
    text = "\n  indented first line\nsecond\n\n"
    assert backend.write("/notes/a.md", text).error is None
    read = backend.read("/notes/a.md")
    assert read.file_data["content"] == text and read.start_line == 1
    assert backend.download_files(["/notes/a.md"])[0].content == text.encode()
    record = memory.list(Scope("default", ("agents", "helper", "files")), kinds="file").items[0]
    assert record.metadata["path"] == "/notes/a.md" and record.kind.value == "file"
    assert backend.write("/empty.md", "").error is None and backend.read_text("/empty.md") == ""
    assert backend.write("/blank.md", " \n\t").error is None and backend.read_text("/blank.md") == " \n\t"


def test_read_window_and_missing_file(backend):
    backend.write("/f.txt", "".join(f"line {i}\n" for i in range(10)))
    window = backend.read("/f.txt", offset=3, limit=2)
    assert window.file_data["content"] == "line 3\nline 4\n" and window.start_line == 4 and window.next_offset == 5
    assert backend.read("/nope.txt").error == "File '/memories/nope.txt' not found"


def test_ls_glob_grep(backend):
    backend.write("/a.md", "alpha tea\n")
    backend.write("/dir/b.md", "beta\ntea again\n")
    backend.write("/dir/sub/c.txt", "gamma\n")
    assert [(e["path"], e["is_dir"]) for e in backend.ls("/").entries] == [("/a.md", False), ("/dir/", True)]
    assert [e["path"] for e in backend.ls("/dir").entries] == ["/dir/b.md", "/dir/sub/"]
    assert sorted(m["path"] for m in backend.glob("*.md").matches) == ["/a.md", "/dir/b.md"]
    assert sorted(m["path"] for m in backend.glob("**/*.txt", "/dir").matches) == ["/dir/sub/c.txt"]
    assert [(m["path"], m["line"]) for m in backend.grep("tea").matches] == [("/a.md", 1), ("/dir/b.md", 2)]
    assert backend.grep("tea", glob="*.md", max_count=1).truncated is True
    assert backend.glob("{a,").error or backend.glob("{a,").matches is not None


def test_edit_and_compare_and_swap_without_a_graph(backend, memory):
    backend.write("/f.md", "one two three\n")
    result = backend.edit("/f.md", "two", "2")
    assert result.error is None and result.occurrences == 1
    assert backend.read_text("/f.md") == "one 2 three\n"
    assert "not found" in backend.edit("/f.md", "zzz", "y").error
    assert "not found" in backend.edit("/missing.md", "a", "b").error
    assert len(memory.history(backend._slots.id(backend.scope(), "/f.md"), backend.scope())) == 2


@pytest.mark.parametrize("path", ["../etc/passwd", "~/x", "", "/a\x07b", "C:/x"])
def test_bad_paths_get_errors_not_crashes(backend, path):
    assert backend.write(path, "x").error
    assert backend.read(path).error
    assert backend.edit(path, "a", "b").error
    assert backend.ls(path).error
    assert backend.upload_files([(path, b"x")])[0].error == "invalid_path"
    assert backend.download_files([path])[0].error == "invalid_path"


def test_paths_outside_a_root(memory):
    standalone = EngramBackend(memory, namespace=("agents", "x", "files"), root="/memories/")
    assert standalone.write("/memories/a.md", "ok").error is None
    assert "outside /memories/" in standalone.write("/etc/a.md", "no").error
    assert [e["path"] for e in standalone.ls("/memories").entries] == ["/memories/a.md"]
    assert standalone.download_files(["/tmp/a.md"])[0].error == "invalid_path"


def test_uploads_refuse_non_utf8_oversized_and_nul_whole(backend):
    responses = backend.upload_files([
        ("/bin.dat", b"\xff\xfe\x00"),
        ("/big.txt", b"x" * 9000),
        ("/nul.txt", b"a\x00b"),
        ("/ok.txt", "grüße 你好".encode()),
    ])
    errors = [r.error for r in responses]
    assert "not UTF-8" in errors[0] and "too large" in errors[1] and "NUL" in errors[2] and errors[3] is None
    assert backend.files() == {"/ok.txt": "grüße 你好"}
    assert "too large" in backend.write("/big.txt", "y" * 8001).error


def test_delete_is_recursive_soft_and_audited(backend, memory):
    backend.write("/d/a.md", "a")
    backend.write("/d/e/b.md", "b")
    backend.write("/keep.md", "k")
    assert backend.delete("/d").error is None
    assert backend.files() == {"/keep.md": "k"}
    assert "not found" in backend.delete("/d").error
    forgets = memory.audit.list(backend.scope(), operation="forget")
    assert len(forgets) == 2 and all(e.actor == "agent:helper" for e in forgets)
    assert backend.write("/d/a.md", "again").error is None and backend.read_text("/d/a.md") == "again"


def test_read_only_paths_refused_for_agents_but_writable_by_the_app(memory):
    policies = org_policies(memory, "acme")
    seed_files(policies, {"/conduct.md": "Be kind.\n"})
    assert "permission denied" in policies.write("/conduct.md", "Be mean.").error
    assert "permission denied" in policies.write("/new.md", "x").error
    assert policies.upload_files([("/new.md", b"x")])[0].error == "permission_denied"
    assert "permission denied" in policies.delete("/conduct.md").error
    assert policies.read_text("/conduct.md") == "Be kind.\n"
    app = policies.as_application()
    assert app.edit("/conduct.md", "kind", "very kind").error is None
    assert policies.read_text("/conduct.md") == "Be very kind.\n"


def test_read_only_patterns_and_read_only_records(memory):
    mixed = EngramBackend(memory, namespace=("agents", "h", "files"), read_only=["/locked/**"])
    assert mixed.write("/open.md", "x").error is None
    assert "read-only" in mixed.write("/locked/a.md", "x").error
    mixed.seed({"/pinned.md": "fixed"}, read_only=True)
    assert "read-only" in mixed.edit("/pinned.md", "fixed", "moved").error
    assert mixed.as_application().write("/pinned.md", "moved").error is None


def test_policies_refuse_with_a_reason_and_nothing_is_written(memory):
    seen = []
    backend = agent_files(memory, "helper", policies=[
        forbid_patterns([r"sk-[A-Za-z0-9]{8,}"], reason="looks like an API key"),
        rate_limit(3, 60),
        require_approval(lambda intent: seen.append(intent) or (intent.path != "/memories/vetoed.md" or "vetoed")),
    ])
    error = backend.write("/keys.md", "my key is sk-abcdefghijkl").error
    assert "looks like an API key" in error and backend.read_text("/keys.md") is None
    assert "vetoed" in backend.write("/vetoed.md", "x").error
    assert backend.write("/a.md", "1").error is None
    assert backend.write("/b.md", "2").error is None
    assert "rate limit" in backend.write("/c.md", "3").error
    assert seen[0].operation == "write" and seen[0].actor == "agent:helper" and not seen[0].application


def test_memory_policies_also_apply(tmp_path):
    from engram import FakeHashEmbedder, Memory

    def no_files_on_fridays(intent):
        raise PermissionDeniedError("closed today")

    memory = Memory.open(str(tmp_path / "p.db"), embedder=FakeHashEmbedder(), policies=[no_files_on_fridays])
    backend = agent_files(memory, "helper")
    assert "closed today" in backend.write("/a.md", "x").error
    memory.close()


def test_skill_files_are_validated_and_name_the_file(memory):
    skills = skills_files(memory, assistant_id="helper")
    path = seed_skill(skills, "web-research", "Research the web: search, read, cite.", "# Steps\n1. Search")
    assert path == "/web-research/SKILL.md"
    assert check_skill(skills.read_text(path), "/skills" + path).name == "web-research"
    with pytest.raises(SkillFormatError) as info:
        seed_skill(skills, "Bad Name", "desc", "body")
    assert "/skills/Bad Name/SKILL.md" in str(info.value)
    app = skills.as_application()
    bad = {
        "no frontmatter": "# just text",
        "not valid YAML": "---\nname: [unclosed\n---\nbody",
        "'description' is required": "---\nname: broken\n---\nbody",
        "must match its directory": "---\nname: other\ndescription: d\n---\nbody",
    }
    for problem, text in bad.items():
        error = app.write("/broken/SKILL.md", text).error
        assert "'/skills/broken/SKILL.md'" in error, error
        assert (problem in error) or (problem == "no frontmatter" and "must start with" in error)
    assert app.files() == {"/web-research/SKILL.md": skills.read_text(path)}


def test_inside_a_composite_backend_and_async_twins(memory):
    composite = CompositeBackend(default=StateBackend(), routes={"/memories/": agent_files(memory, "helper")})

    async def main() -> None:
        assert (await composite.awrite("/memories/x.md", "hello")).error is None
        assert (await composite.aread("/memories/x.md")).file_data["content"] == "hello"
        assert (await composite.aedit("/memories/x.md", "hello", "bye")).occurrences == 1
        assert [e["path"] for e in (await composite.als("/memories/")).entries] == ["/memories/x.md"]
        assert [m["path"] for m in (await composite.agrep("bye", "/memories/")).matches] == ["/memories/x.md"]
        assert [m["path"] for m in (await composite.aglob("**/*.md", "/memories/")).matches] == ["/memories/x.md"]
        assert (await composite.aupload_files([("/memories/y.md", b"y")]))[0].error is None
        assert (await composite.adownload_files(["/memories/y.md"]))[0].content == b"y"
        assert (await composite.adelete("/memories/y.md")).error is None

    asyncio.run(main())


def test_old_protocol_names(backend):
    backend.write("/a.md", "tea")
    assert [i["path"] for i in backend.ls_info("/")] == ["/a.md"]
    assert [i["path"] for i in backend.glob_info("*.md")] == ["/a.md"]
    assert backend.grep_raw("tea")[0]["path"] == "/a.md"


def test_invalid_namespace_labels_are_errors_on_results(memory):
    broken = EngramBackend(memory, namespace=lambda runtime: ("users", "bad\x07id", "files"))
    assert "control character" in broken.write("/a.md", "x").error
    assert "control character" in broken.read("/a.md").error
    assert "control character" in broken.ls("/").error
    assert broken.download_files(["/a.md"])[0].error.startswith("Error:")
    with pytest.raises(ValueError):
        EngramBackend(memory, namespace=("users", ""))


def test_a_namespace_factory_reading_a_missing_runtime_is_a_clear_error(memory):
    """Issue 28 item 1: upstream StoreBackend raises a RuntimeError saying why; engram's
    write() answers the same reason instead of letting the AttributeError escape."""
    backend = EngramBackend(memory, namespace=lambda runtime: ("users", runtime.server_info.user.identity))
    written = backend.write("/notes.md", "x")
    assert written.error and "namespace factory" in written.error and "outside a LangGraph graph" in written.error
    read = backend.read("/notes.md")
    assert read.error and "namespace factory" in read.error and not read.error.startswith("Error:")
    assert "namespace factory" in (backend.edit("/notes.md", "x", "y").error or "")
