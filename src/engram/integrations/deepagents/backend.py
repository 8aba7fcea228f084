"""EngramBackend: Deep Agents' backend protocol over engram (memory as files).

One file is one engram record of kind ``file`` in the backend's namespace: the
content is the file text (exact, whitespace included), ``metadata["path"]`` its
path; every write is a new version with an audit row, made through ``Memory``.

    backend = CompositeBackend(default=StateBackend(), routes={
        "/memories/": EngramBackend(memory, namespace=("agents", "helper", "files"), mount="/memories/"),
    })

Paths arrive relative to the route (CompositeBackend strips "/memories"); ``mount``
is only used to show the model the path it used in messages. Used on its own,
``root="/memories/"`` makes the backend accept only paths below it.

A write an approval rule holds (e.g. ``ApprovalRule("policies", paths=("/policies/*",))``)
pauses the agent with LangGraph ``interrupt()`` until a person resumes it with
``Command(resume="approve" | "reject" | {"action": "edit", "content": ...})``; the tool
then reports what was decided. With ``approvals="queue"`` (or outside a graph) the
tool answers that the change awaits approval, and reviewers decide it elsewhere.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from deepagents.backends.protocol import (
    BackendProtocol,
    DeleteResult,
    EditResult,
    FileData,
    FileDownloadResponse,
    FileInfo,
    FileUploadResponse,
    GlobResult,
    GrepResult,
    LsResult,
    ReadResult,
    WriteResult,
)
from deepagents.backends.utils import (
    InvalidGlobPatternError,
    _glob_search_files,
    grep_matches_from_files,
    perform_string_replacement,
    slice_read_response,
)
from langgraph.types import interrupt
from wcmatch import glob as wcglob

from ...errors import ConfigError, ConflictError, EngramError, InvalidValueError, PermissionDeniedError
from ...memory import Memory
from ...model import MemoryRecord, Scope
from ...text.tokenize import has_cjk
from ...values.governance import PendingApprovalError, PendingChange
from .. import _approval
from .._slots import Slots
from . import _files as files
from .policies import FileOperation, FilePolicy, FileWriteIntent
from .skills import check_skill, is_skill_file

NamespaceFactory = Callable[[Any], Sequence[str]]
PROFILE_TITLE = {"en": "What I know about the user", "zh": "关于用户"}
_GLOB_FLAGS = wcglob.GLOBSTAR | wcglob.BRACE | wcglob.DOTGLOB


class EngramBackend(BackendProtocol):
    """Files in one engram namespace, for Deep Agents' filesystem tools.

    - ``namespace``: a tuple, or a callable receiving the LangGraph ``Runtime`` (None
      outside a graph) and returning one, e.g. a user id read from the runtime.
    - ``read_only``: True (everything) or glob patterns ("/**", "/policies/**")
      that agents may not write; application code (``as_application()``) may.
    - ``policies``: FilePolicy callables run before each write; they refuse by
      raising PermissionDeniedError with a reason the model sees.
    - ``edit`` is a compare-and-swap: an edit based on a read older than the file's
      current version is refused with an error telling the model to read again.
    - ``approvals``: "interrupt" (a held write waits for a person inside the graph) or
      "queue" (the tool says it awaits approval); ``reviewer``: who decides when the
      resume value does not say.
    """

    def __init__(
        self,
        memory: Memory,
        *,
        namespace: Sequence[str] | NamespaceFactory,
        tenant: str = "default",
        root: str = "/",
        mount: str | None = None,
        read_only: bool | Sequence[str] = False,
        policies: Sequence[FilePolicy] = (),
        actor: str | Callable[[Any], str] = "agent",
        max_file_chars: int | None = None,
        validate_skills: bool = True,
        application: bool = False,
        tracker: files.ReadTracker | None = None,
        approvals: Literal["interrupt", "queue"] = "interrupt",
        reviewer: str = "deepagents:reviewer",
        profile: str | None = None,
    ) -> None:
        Scope(tenant)
        if approvals not in ("interrupt", "queue"):
            raise InvalidValueError(f"approvals must be 'interrupt' or 'queue', got {approvals!r}")
        self.approvals = approvals
        self.reviewer = reviewer
        self.memory = memory
        if callable(namespace):
            self.namespace: NamespaceFactory | tuple[str, ...] = namespace
        else:
            self.namespace = Scope(tenant, tuple(namespace)).namespace
        self.tenant = tenant
        self.root = "/" + root.strip("/") + "/" if root.strip("/") else "/"
        self.mount = mount if mount is not None else self.root
        self.read_only = read_only if isinstance(read_only, bool) else tuple(read_only)
        self.policies = list(policies)
        self.actor = actor
        limit = memory.settings.max_content_chars
        self.max_file_chars = min(max_file_chars or limit, limit)
        self.validate_skills = validate_skills
        self.application = application
        self.tracker = tracker or files.ReadTracker()
        self._slots = Slots(memory, files.SPACE)
        self.profile = None if profile is None else "/" + profile.strip("/")

    def as_application(self, actor: str = "app") -> EngramBackend:
        """The same files for application code: read-only rules and read-before-edit
        do not apply, read-only records may be overwritten; policies still run."""
        clone = copy.copy(self)
        clone.application = True
        clone.actor = actor
        return clone

    # -- the profile file ----------------------------------------------------------------------

    def _profile_file(self, local: str) -> FileData | None:
        """``profile`` (e.g. "/profile.md") is a read-only file made from the memories of the
        scope these files belong to ("users/<id>" for "users/<id>/files"): the user's profile,
        what ``Memory.context`` always gives first."""
        if self.profile is None or local != self.profile:
            return None
        namespace = self.scope().namespace
        owner = Scope(self.tenant, namespace[:-1] if namespace and namespace[-1] == "files" else namespace)
        records = self.memory.profile(owner)
        language = "zh" if sum(has_cjk(r.content) for r in records) * 2 > len(records) else "en"
        text = f"# {PROFILE_TITLE[language]}\n\n" + "\n".join(f"- {' '.join(r.content.split())}" for r in records)
        moment = max((r.updated_at for r in records), default=None)
        stamp = moment.isoformat() if moment else ""
        return FileData(content=text + "\n", encoding="utf-8", created_at=stamp, modified_at=stamp)

    def _profile_entry(self, local: str) -> list[FileInfo]:
        """The profile file in a listing, once there is something in it."""
        profile = self._profile_file(local)
        if profile is None or not profile["modified_at"]:
            return []
        return [FileInfo(path=self._out(local), is_dir=False, size=len(profile["content"]),
                         modified_at=profile["modified_at"])]

    # -- scope, actor, paths -----------------------------------------------------------------

    def scope(self) -> Scope:
        if not callable(self.namespace):
            return Scope(self.tenant, self.namespace)
        runtime = files.current_runtime()
        try:
            namespace = self.namespace(runtime)
        except AttributeError as exc:
            raise ConfigError(_factory_failed(runtime, exc)) from exc
        if isinstance(namespace, str) or not isinstance(namespace, Sequence):
            raise ConfigError(f"the namespace factory returned {namespace!r}; it must return a tuple of labels")
        return Scope(self.tenant, tuple(namespace))

    def _actor(self) -> str:
        return self.actor(files.current_runtime()) if callable(self.actor) else self.actor

    def _local(self, path: Any) -> str:
        return files.local_path(path, self.root)

    def _show(self, local: str) -> str:
        return files.display(self.mount, local)

    def _out(self, local: str) -> str:
        """The path as the caller addresses it (with ``root`` when standalone)."""
        return self.root.rstrip("/") + local

    def _writable(self, local: str, record: MemoryRecord | None) -> None:
        if local == self.profile:
            raise PermissionDeniedError(f"'{self._show(local)}' is made from memories and read-only; pin or unpin "
                                        "a memory (Memory.update(id, scope, pinned=...)) to change it")
        if self.application:
            return
        if self.read_only is True or (
            self.read_only and any(wcglob.globmatch(local, p, flags=_GLOB_FLAGS) for p in self.read_only)
        ):
            raise PermissionDeniedError(f"'{self._show(local)}' is read-only for agents")
        if record is not None and record.read_only:
            raise PermissionDeniedError(f"'{self._show(local)}' is read-only for agents")

    def _thread(self) -> str | None:
        return None if self.application else files.current_thread_id()

    # -- reads -------------------------------------------------------------------------------

    def ls(self, path: str) -> LsResult:
        try:
            local = self._local(path)
            directory = local.rstrip("/") + "/"
            entries: list[FileInfo] = []
            subdirs: set[str] = set()
            for record in files.scan_files(self.memory, self.scope()):
                file_path = record.metadata["path"]
                if not file_path.startswith(directory):
                    continue
                rest = file_path[len(directory) :]
                if "/" in rest:
                    subdirs.add(directory + rest.split("/", 1)[0] + "/")
                    continue
                entries.append(self._info(record))
            entries.extend(
                FileInfo(path=self._out(d), is_dir=True, size=0, modified_at="") for d in sorted(subdirs)
            )
            if self.profile is not None and self.profile.rsplit("/", 1)[0] + "/" == directory:
                entries += self._profile_entry(self.profile)
            entries.sort(key=lambda e: e["path"])
            return LsResult(entries=entries)
        except EngramError as exc:
            return LsResult(error=str(exc))  # the tool adds "Error: "

    def read(self, file_path: str, offset: int = 0, limit: int = 2000) -> ReadResult:
        try:
            local = self._local(file_path)
            profile = self._profile_file(local)
            if profile is not None:
                return slice_read_response(profile, offset, limit)
            scope = self.scope()
            record = self._slots.live(scope, local)
            if record is None:
                return ReadResult(error=f"File '{self._show(local)}' not found")
            self.tracker.saw(self._thread(), scope, local, record.version)
            return slice_read_response(files.file_data(record), offset, limit)
        except EngramError as exc:
            return ReadResult(error=str(exc))  # the tool adds "Error: "

    def grep(
        self, pattern: str, path: str | None = None, glob: str | None = None, *, max_count: int | None = None
    ) -> GrepResult:
        try:
            if path is not None:
                self._local(path)
            return grep_matches_from_files(self._all_files(), pattern, path, glob, max_count=max_count)
        except EngramError as exc:
            return GrepResult(error=f"Error: {exc}")

    def glob(self, pattern: str, path: str | None = None) -> GlobResult:
        try:
            if path is not None:
                self._local(path)
            found = self._all_files()
            try:
                listing = _glob_search_files(found, pattern, path)
            except InvalidGlobPatternError as exc:
                return GlobResult(error=str(exc))
            if listing == "No files found":
                return GlobResult(matches=[])
            infos = []
            for out_path in listing.split("\n"):
                data = found[out_path]
                infos.append(FileInfo(path=out_path, is_dir=False, size=len(data["content"].encode("utf-8")),
                                      modified_at=data.get("modified_at", "")))
            return GlobResult(matches=infos)
        except EngramError as exc:
            return GlobResult(error=str(exc))  # the tool adds "Error: "

    def download_files(self, paths: list[str]) -> list[FileDownloadResponse]:
        out = []
        thread = self._thread()
        try:
            scope = self.scope()
        except EngramError as exc:
            return [FileDownloadResponse(path=p, error=f"Error: {exc}") for p in paths]
        for path in paths:
            try:
                local = self._local(path)
            except InvalidValueError:
                out.append(FileDownloadResponse(path=path, error="invalid_path"))
                continue
            try:
                profile = self._profile_file(local)
                if profile is not None:
                    out.append(FileDownloadResponse(path=path, content=profile["content"].encode("utf-8")))
                    continue
                record = self._slots.live(scope, local)
                if record is None:
                    error = "is_directory" if self._is_directory(scope, local) else "file_not_found"
                    out.append(FileDownloadResponse(path=path, error=error))
                    continue
                self.tracker.saw(thread, scope, local, record.version)
                out.append(FileDownloadResponse(path=path, content=files.file_text(record).encode("utf-8")))
            except EngramError as exc:
                out.append(FileDownloadResponse(path=path, error=f"Error: {exc}"))
        return out

    # -- writes ------------------------------------------------------------------------------

    def write(self, file_path: str, content: str) -> WriteResult:
        """Create or replace a file. Replacing a file this thread read at an older
        version is refused (the write would discard someone else's change)."""
        try:
            local = self._local(file_path)
            scope = self.scope()
            current = self._slots.live(scope, local)
            seen = self.tracker.seen(self._thread(), scope, local) if current is not None else None
            if current is not None and seen is not None and seen != current.version:
                return WriteResult(error=self._stale(local, seen, current.version))
            try:
                self._save(scope, local, content, "write", current, blind=seen is None)
            except PendingApprovalError as held:
                refused = self._await_approval(held.pending, scope, local)
                if refused:
                    return WriteResult(error=refused)
            return WriteResult(path=file_path)
        except EngramError as exc:
            return WriteResult(error=self._message(exc, file_path))

    def edit(self, file_path: str, old_string: str, new_string: str, replace_all: bool = False) -> EditResult:
        """Replace text in a file as a compare-and-swap on the version last read."""
        try:
            local = self._local(file_path)
            scope = self.scope()
            if local == self.profile:
                self._writable(local, None)
            current = self._slots.live(scope, local)
            if current is None:
                return EditResult(error=f"Error: File '{self._show(local)}' not found")
            thread = self._thread()
            if thread is not None:
                seen = self.tracker.seen(thread, scope, local)
                if seen is None:
                    return EditResult(error=f"Error: read '{self._show(local)}' with read_file before editing it.")
                if seen != current.version:
                    return EditResult(error=self._stale(local, seen, current.version))
            replaced = perform_string_replacement(files.file_text(current), old_string, new_string, replace_all)
            if isinstance(replaced, str):
                return EditResult(error=replaced)
            text, occurrences = replaced
            try:
                self._save(scope, local, text, "edit", current)
            except PendingApprovalError as held:
                refused = self._await_approval(held.pending, scope, local)
                if refused:
                    return EditResult(error=refused)
            return EditResult(path=file_path, occurrences=int(occurrences))
        except EngramError as exc:
            return EditResult(error=self._message(exc, file_path))

    def delete(self, file_path: str) -> DeleteResult:
        """Forget a file, or a directory and everything below it. Versions and audit
        stay in engram (``Memory.history``); nothing is deleted when any file is refused."""
        try:
            local = self._local(file_path)
            scope = self.scope()
            if local == self.profile:
                self._writable(local, None)
            base = local.rstrip("/")
            doomed = [r for r in files.scan_files(self.memory, scope)
                      if r.metadata["path"] == base or r.metadata["path"].startswith(base + "/")]
            if not doomed:
                return DeleteResult(error=f"Error: File '{self._show(local)}' not found")
            actor = self._actor()
            for record in doomed:
                path = record.metadata["path"]
                self._writable(path, record)
                self._run_policies("delete", path, None, files.file_text(record), actor, scope)
            for record in doomed:
                self._slots.delete(scope, record.metadata["path"], actor=actor, override_read_only=self.application)
            return DeleteResult(path=file_path)
        except EngramError as exc:
            return DeleteResult(error=self._message(exc, file_path))

    def upload_files(self, files_: list[tuple[str, bytes]]) -> list[FileUploadResponse]:
        """Each file is written whole or not at all; errors are per file."""
        out = []
        for path, data in files_:
            out.append(FileUploadResponse(path=path, error=self._upload_one(path, data)))
        return out

    def _upload_one(self, path: str, data: bytes) -> str | None:
        try:
            local = self._local(path)
        except InvalidValueError:
            return "invalid_path"
        if not isinstance(data, (bytes, bytearray)):
            return f"Error: content of '{self._show(local)}' must be bytes"
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            return f"Error: '{self._show(local)}' is not UTF-8 text (byte {exc.start}); engram stores text files only"
        try:
            scope = self.scope()
            self._save(scope, local, text, "upload", self._slots.live(scope, local))
            return None
        except PermissionDeniedError as exc:
            return "permission_denied" if "read-only" in str(exc) else f"Error: refused: {exc}"
        except EngramError as exc:
            return self._message(exc, path)

    def _save(
        self, scope: Scope, local: str, text: Any, operation: FileOperation, current: MemoryRecord | None,
        *, read_only: bool | None = None, blind: bool = False,
    ) -> MemoryRecord:
        """Check, run the policies, then write the whole file as one new version,
        expecting the version the caller looked at (else ConflictError). ``blind``: the
        caller never read the file, so its write replaces whatever is there (Deep
        Agents' protocol: a write without a read overwrites), retried past concurrent
        writers instead of answering a conflict."""
        if not isinstance(text, str):
            raise InvalidValueError(f"content of '{self._show(local)}' must be a string, got {type(text).__name__}")
        if local.endswith("/") or local == "/":
            raise InvalidValueError(f"'{self._show(local)}' is a directory path, not a file")
        self._writable(local, current)
        if len(text) > self.max_file_chars:
            raise InvalidValueError(
                f"'{self._show(local)}' is too large: {len(text)} characters; the limit is {self.max_file_chars}"
            )
        if "\x00" in text:
            raise InvalidValueError(f"'{self._show(local)}' contains a NUL character; only text files are stored")
        if self.validate_skills and is_skill_file(local):
            check_skill(text, self._show(local))
        actor = self._actor()
        previous = files.file_text(current) if current is not None else None
        self._run_policies(operation, local, text, previous, actor, scope)
        if read_only is None:
            read_only = current.read_only if current is not None else False
        value = files.file_value(local, text, read_only=read_only, mount=self.mount)
        proposed = self._proposed(scope, local, value.content, actor)
        if proposed is not None:  # the tool re-ran on resume: the same proposal, not a second one
            raise PendingApprovalError(proposed)
        expected = None if blind else (current.version if current is not None else 0)
        record = self._slots.put(
            scope, local, value, actor=actor, expected_version=expected,
            override_read_only=self.application, reason=f"{operation} {self._show(local)}",
        )
        self.tracker.saw(self._thread(), scope, local, record.version)
        return record

    # -- approvals ---------------------------------------------------------------------------

    def _proposed(self, scope: Scope, local: str, content: str, actor: str) -> PendingChange | None:
        if self.approvals != "interrupt" or self.application:
            return None
        found = self.memory.approvals.list(scope, record_id=self._slots.id(scope, local), limit=20)
        return next((p for p in found if p.actor == actor and p.record.content == content), None)

    def _await_approval(self, pending: PendingChange, scope: Scope, local: str) -> str | None:
        """Wait for a person (interrupt) and carry out the decision; returns the error the
        model sees when the write did not happen, None when it was approved."""
        waiting = (f"Error: the change to '{self._show(local)}' needs approval (pending change {pending.id}, "
                   f"{pending.rule}); it is not written yet. Tell the user it awaits a reviewer.")
        if self.approvals != "interrupt" or self.application:
            return waiting
        try:
            answer = interrupt(_approval.payload([_approval.summary(pending)]))
        except RuntimeError:  # not inside a graph: nobody to wait for here
            return waiting
        chosen = _approval.decisions(answer, [pending.id], self.reviewer)
        outcomes = _approval.apply(self.memory, Scope(self.tenant), chosen)
        if not outcomes:
            return waiting
        outcome = outcomes[0]
        if outcome["decision"] == "approved":
            for written in outcome.get("records", []):
                self.tracker.saw(self._thread(), scope, local, int(written["version"]))
            return None
        if outcome["decision"] == "conflict":
            return f"Error: the approved change to '{self._show(local)}' could not be written: {outcome['error']}"
        reason = f": {outcome['reason']}" if outcome.get("reason") else ""
        return f"Error: the change to '{self._show(local)}' was {outcome['decision']} by {outcome['by']}{reason}"

    def _run_policies(
        self, operation: FileOperation, local: str, content: str | None, previous: str | None, actor: str,
        scope: Scope,
    ) -> None:
        intent = FileWriteIntent(operation, self._show(local), content, previous, actor, scope, self.application)
        for policy in self.policies:
            policy(intent)

    # -- application helpers -----------------------------------------------------------------

    def seed(self, contents: Mapping[str, str], *, read_only: bool = False, overwrite: bool = True) -> list[str]:
        """Write files from application code (e.g. at deploy time); returns the paths
        written. ``read_only=True`` marks them read-only for agents. Raises on error."""
        app = self if self.application else self.as_application()
        written = []
        scope = app.scope()
        for path, text in contents.items():
            local = app._local(path)
            current = app._slots.live(scope, local)
            if current is not None and not overwrite:
                continue
            app._save(scope, local, text, "write", current, read_only=read_only)
            written.append(path)
        return written

    def read_text(self, path: str) -> str | None:
        record = self._slots.live(self.scope(), self._local(path))
        return files.file_text(record) if record is not None else None

    def files(self) -> dict[str, str]:
        return {self._out(r.metadata["path"]): files.file_text(r) for r in files.scan_files(self.memory, self.scope())}

    # -- earlier protocol names (deepagents < 0.5) -------------------------------------------

    def ls_info(self, path: str) -> list[FileInfo]:
        return self.ls(path).entries or []

    def glob_info(self, pattern: str, path: str = "/") -> list[FileInfo]:
        return self.glob(pattern, path).matches or []

    def grep_raw(self, pattern: str, path: str | None = None, glob: str | None = None) -> Any:
        result = self.grep(pattern, path, glob)
        return result.error if result.error else (result.matches or [])

    # -- helpers -----------------------------------------------------------------------------

    def _info(self, record: MemoryRecord) -> FileInfo:
        return FileInfo(path=self._out(record.metadata["path"]), is_dir=False,
                        size=len(files.file_text(record).encode("utf-8")), modified_at=record.updated_at.isoformat())

    def _all_files(self) -> dict[str, Any]:
        return {self._out(r.metadata["path"]): files.file_data(r) for r in files.scan_files(self.memory, self.scope())}

    def _is_directory(self, scope: Scope, local: str) -> bool:
        prefix = local.rstrip("/") + "/"
        return any(r.metadata["path"].startswith(prefix) for r in files.scan_files(self.memory, scope))

    def _stale(self, local: str, seen: int, now: int) -> str:
        return (
            f"Error: '{self._show(local)}' was changed by another writer since you read it "
            f"(you read version {seen}; it is now version {now}). Read it again with read_file, then redo the change."
        )

    def _message(self, exc: EngramError, path: str) -> str:
        try:
            path = self._show(self._local(path))
        except EngramError:
            pass
        if isinstance(exc, ConflictError):
            return (
                f"Error: '{path}' was changed by another writer while this change was being saved; nothing was "
                "written. Read it again with read_file, then redo the change."
            )
        if isinstance(exc, PermissionDeniedError):
            return f"Error: permission denied: {exc}"
        return f"Error: {exc}"


def _factory_failed(runtime: Any, exc: AttributeError) -> str:
    """Deep Agents' StoreBackend raises a RuntimeError saying why; engram says the same as
    an error the tool returns, so the agent is told instead of crashing."""
    if runtime is None:
        return ("the namespace factory tried to read the Runtime, but it is unavailable (running outside a "
                "LangGraph graph execution): use the backend inside a graph (e.g. via create_deep_agent), or "
                f"pass a namespace factory that does not read the Runtime ({exc})")
    return f"the namespace factory failed: {type(exc).__name__}: {exc}"
