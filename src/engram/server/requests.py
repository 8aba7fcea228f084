"""Request bodies of the HTTP API. They check shapes and types (so a bad body is a
422 naming the field); engram itself checks values (ranges, labels, sizes), so the
rules live in one place. The tenant never appears here: it comes from the API key."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, model_validator

from ..limits import check_unicode
from ..model import Kind, Scope, Sensitivity, Source, Status
from ..writes import MemoryDraft

MAX_BATCH = 1000
MAX_K = 1000
MAX_SCOPES = 16
MEMORY_FIELDS = frozenset(MemoryDraft.__dataclass_fields__) - {"id"}


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _valid_unicode(cls, data: Any) -> Any:
        """A lone surrogate (JSON allows "\\ud800") anywhere in a body, keys included, is a
        422: no backend, embedder or tokenizer can encode it."""
        stack = [data]
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                check_unicode(item, "a string of the body")
            elif isinstance(item, dict):
                stack.extend(item.keys())
                stack.extend(item.values())
            elif isinstance(item, list):
                stack.extend(item)
        return data


class ScopeIn(Body):
    """A namespace path, or the shortcuts: user (users/<user>), user + agent
    (agents/<agent>/users/<user>), agent (agents/<agent>), org (orgs/<org>).
    Neither: the tenant's root."""

    namespace: list[str] | None = Field(None, description="Namespace labels", examples=[["users", "alice"]])
    user: str | None = None
    agent: str | None = None
    org: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _no_tenant(cls, data: Any) -> Any:
        if isinstance(data, dict) and "tenant" in data:
            raise ValueError("the tenant comes from the API key, never from the request")
        return data

    @model_validator(mode="after")
    def _one_form(self) -> ScopeIn:
        shortcuts = [name for name in ("user", "agent", "org") if getattr(self, name) is not None]
        if self.namespace is not None and shortcuts:
            raise ValueError("give either namespace or the user/agent/org shortcuts, not both")
        if self.org is not None and len(shortcuts) > 1:
            raise ValueError("org cannot be combined with user or agent; give the namespace instead")
        return self

    def resolve(self, tenant: str) -> Scope:
        """The engram Scope inside the caller's tenant (labels checked by Scope)."""
        if self.namespace is not None:
            return Scope(tenant, tuple(self.namespace))
        if self.user is not None:
            return Scope.for_user(tenant, self.user, agent=self.agent)
        if self.agent is not None:
            return Scope.for_agent(tenant, self.agent)
        if self.org is not None:
            return Scope.for_org(tenant, self.org)
        return Scope(tenant)


class SourceIn(Body):
    actor: str = "user"
    thread_id: str | None = None
    message_id: str | None = None
    reply_to: str | None = Field(None, description="The question this memory answers; searched with it")


class MemoryIn(Body):
    """One memory to store as given (no extraction)."""

    content: str = Field(examples=["Prefers concise reports"])
    kind: Kind = Kind.FACT
    importance: float = Field(0.5, description="In [0, 1]")
    confidence: float = Field(1.0, description="In [0, 1]")
    category: str | None = None
    tags: list[str] | None = None
    metadata: dict[str, Any] | None = None
    sensitivity: Sensitivity = Sensitivity.NORMAL
    valid_from: AwareDatetime | None = None
    valid_to: AwareDatetime | None = None
    expires_at: AwareDatetime | None = None
    read_only: bool = False
    pinned: bool | None = Field(None, description="true: always in the user's profile; false: never; "
                                                  "null: engram decides")
    source: SourceIn | None = None
    subject: str | None = Field(None, description="who it is about: user (the default), team, or other:<who>")
    slot: str | None = Field(None, description="which slot of the subject it sets (engram.slots.Slot), or null")

    def fields(self) -> dict[str, Any]:
        """The keyword arguments of Memory.remember (and the fields of MemoryDraft)."""
        fields = {name: getattr(self, name) for name in type(self).model_fields if name in MEMORY_FIELDS}
        fields["source"] = Source(**self.source.model_dump()) if self.source else None
        return fields

    def draft(self) -> MemoryDraft:
        return MemoryDraft(**self.fields())


class RememberIn(MemoryIn):
    scope: ScopeIn = Field(default_factory=ScopeIn)


class BatchIn(Body):
    scope: ScopeIn = Field(default_factory=ScopeIn)
    items: list[MemoryIn] = Field(min_length=1, max_length=MAX_BATCH)


class ChangeIn(Body):
    """Fields to change (only those sent are changed; null clears an optional field),
    plus how: expected_version makes it a compare-and-swap (409 if the record moved on)."""

    content: str | None = None
    kind: Kind | None = None
    importance: float | None = None
    confidence: float | None = None
    category: str | None = None
    tags: list[str] | None = None
    metadata: dict[str, Any] | None = None
    sensitivity: Sensitivity | None = None
    valid_to: AwareDatetime | None = None
    expires_at: AwareDatetime | None = None
    read_only: bool | None = None
    pinned: bool | None = Field(None, description="true pins into the profile, false out of it, null: engram decides")
    subject: str | None = Field(None, description="who it is about: user, team, or other:<who>")
    slot: str | None = Field(None, description="which slot of the subject it sets (engram.slots.Slot)")
    expected_version: int | None = Field(None, ge=1)
    reason: str | None = None
    override_read_only: bool = False

    def changes(self) -> dict[str, Any]:
        control = {"expected_version", "reason", "override_read_only"}
        return {name: getattr(self, name) for name in self.model_fields_set - control}


class ReasonIn(Body):
    reason: str | None = None


class PurgeScopeIn(Body):
    scope: ScopeIn
    reason: str | None = None


class SearchIn(Body):
    query: str = Field(examples=["how should reports be written?"])
    scope: ScopeIn = Field(default_factory=ScopeIn)
    k: int = Field(10, ge=1, le=MAX_K)
    min_score: float = 0.0
    include_descendants: bool = False
    kinds: list[Kind] | None = None
    category: str | None = None
    tags: list[str] | None = Field(None, description="Every tag must be present")
    metadata: dict[str, Any] | None = Field(
        None, description="key: value for equality, or key: {$eq|$ne|$gt|$gte|$lt|$lte: value}",
        examples=[{"team": "core", "priority": {"$gte": 2}}],
    )
    created_after: AwareDatetime | None = None
    created_before: AwareDatetime | None = None
    statuses: list[Status] | None = Field(None, description="Default: active only")
    retriever: Literal["hybrid", "bm25", "vector"] | None = None
    as_of: AwareDatetime | None = Field(None, description="What was valid at this moment (superseded versions "
                                                          "then current included)")

    def options(self) -> dict[str, Any]:
        options = self.model_dump(exclude={"query", "scope", "statuses"})
        if self.statuses is not None:
            options["statuses"] = self.statuses
        return options


class ContextIn(Body):
    query: str
    scope: ScopeIn | None = None
    scopes: list[ScopeIn] | None = Field(None, min_length=1, max_length=MAX_SCOPES,
                                         description="Several scopes, e.g. the user's and the org's")
    budget_tokens: int = Field(800, ge=1)
    k: int = Field(20, ge=1, le=MAX_K)
    min_score: float = 0.0
    answer_id: str | None = None
    thread_id: str | None = None
    language: Literal["auto", "en", "zh"] = "auto"
    as_of: AwareDatetime | None = Field(None, description="The memories valid at this moment")

    @model_validator(mode="after")
    def _scope_or_scopes(self) -> ContextIn:
        if self.scope is not None and self.scopes is not None:
            raise ValueError("give scope or scopes, not both")
        return self

    def resolve(self, tenant: str) -> list[Scope]:
        return [s.resolve(tenant) for s in self.scopes or [self.scope or ScopeIn()]]


class MessageIn(Body):
    role: Literal["user", "assistant", "system", "tool"]
    content: str
    id: str | None = None
    name: str | None = None


class AddIn(Body):
    messages: list[MessageIn] = Field(min_length=1)
    scope: ScopeIn = Field(default_factory=ScopeIn)
    thread_id: str | None = None
    background: bool = Field(False, description="Queue it and answer 202 with a job id")
    force: bool = Field(False, description="Extract even if the trigger would not fire")
