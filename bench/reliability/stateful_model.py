"""A hypothesis state machine drives Memory and a plain in-memory model with the same
random operations (remember, update with and without compare-and-swap, forget, restore,
purge, reads from the right and the wrong scope) and checks after every step that the
store shows exactly what the model says: contents, statuses, versions, history
lengths, list results per scope, and the typed error of each refused operation.

    python bench/reliability/stateful_model.py --backend both --examples 200 --steps 50

Every example works in tenants of its own, so examples share one database.
"""

from __future__ import annotations

import sys
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from engram import (
    ConflictError,
    FakeClock,
    FakeHashEmbedder,
    InvalidValueError,
    Memory,
    NotFoundError,
    Scope,
    Settings,
    Status,
)

WORDS = st.text(alphabet="abcdefgh ", min_size=1, max_size=12).filter(str.strip)


@dataclass(frozen=True)
class Modelled:
    scope: Scope
    content: str
    status: Status = Status.ACTIVE
    version: int = 1


def machine_for(memory: Memory, clock: FakeClock) -> type[RuleBasedStateMachine]:
    class StoreVersusModel(RuleBasedStateMachine):
        records = Bundle("records")

        def __init__(self) -> None:
            super().__init__()
            run = uuid.uuid4().hex[:8]
            self.scopes = [Scope(f"t{run}a", ("users", "ana")), Scope(f"t{run}a", ("users", "bob")),
                           Scope(f"t{run}b", ("users", "ana"))]
            self.model: dict[str, Modelled] = {}

        @rule(target=records, where=st.integers(0, 2), content=WORDS)
        def remember(self, where: int, content: str) -> str:
            record = memory.remember(content, self.scopes[where])
            self.model[record.id] = Modelled(self.scopes[where], record.content)
            return record.id

        @rule(record_id=records, content=WORDS, cas=st.sampled_from(["none", "right", "stale"]))
        def update(self, record_id: str, content: str, cas: str) -> None:
            known = self.model.get(record_id)
            if known is None:
                return self._gone(lambda: memory.update(record_id, self.scopes[0], content=content))
            expected = {"none": None, "right": known.version, "stale": known.version + 1}[cas]
            if cas == "stale":
                try:
                    memory.update(record_id, known.scope, content=content, expected_version=expected)
                except ConflictError:
                    return
                raise AssertionError("a stale compare-and-swap was accepted")
            updated = memory.update(record_id, known.scope, content=content, expected_version=expected)
            self.model[record_id] = replace(known, content=updated.content, version=known.version + 1)

        @rule(record_id=records)
        def forget(self, record_id: str) -> None:
            known = self.model.get(record_id)
            if known is None:
                return self._gone(lambda: memory.forget(record_id, self.scopes[0]))
            memory.forget(record_id, known.scope)
            if known.status is not Status.DELETED:
                self.model[record_id] = replace(known, status=Status.DELETED, version=known.version + 1)

        @rule(record_id=records)
        def restore(self, record_id: str) -> None:
            known = self.model.get(record_id)
            if known is None:
                return self._gone(lambda: memory.restore(record_id, self.scopes[0]))
            if known.status is Status.ACTIVE:
                try:
                    memory.restore(record_id, known.scope)
                except InvalidValueError:
                    return
                raise AssertionError("restoring an active record was accepted")
            memory.restore(record_id, known.scope)
            self.model[record_id] = replace(known, status=Status.ACTIVE, version=known.version + 1)

        @rule(record_id=records)
        def purge(self, record_id: str) -> None:
            known = self.model.pop(record_id, None)
            if known is None:
                return self._gone(lambda: memory.purge(record_id, self.scopes[0]))
            memory.purge(record_id, known.scope)

        @rule(record_id=records, where=st.integers(0, 2))
        def read_from_any_scope(self, record_id: str, where: int) -> None:
            known = self.model.get(record_id)
            scope = self.scopes[where]
            if known is None or known.scope != scope:
                self._gone(lambda: memory.get(record_id, scope))
                return
            record = memory.get(record_id, scope)
            assert (record.content, record.status, record.version) == (known.content, known.status, known.version)
            assert len(memory.history(record_id, scope)) == known.version

        def _gone(self, call: Any) -> None:
            try:
                call()
            except NotFoundError:
                return
            raise AssertionError("an operation on a purged record, or from another scope, found it")

        @rule()
        def tick(self) -> None:
            clock.advance(seconds=61)

        @invariant()
        def lists_match_the_model(self) -> None:
            for scope in self.scopes:
                listed = {r.id for r in memory.list(scope, limit=1000).items}
                expected = {rid for rid, m in self.model.items() if m.scope == scope and m.status is Status.ACTIVE}
                assert listed == expected, (scope, listed ^ expected)

    return StoreVersusModel


def run(backend: str, *, examples: int = 20, steps: int = 30, pg_url: str | None = None) -> dict[str, Any]:
    target = _common.new_target(backend, pg_url=pg_url)
    clock = FakeClock()
    memory = Memory.open(target.url, embedder=FakeHashEmbedder(), clock=clock,
                         settings=Settings(auto_worker=False, record_recalls=False))
    try:
        machine = machine_for(memory, clock)
        divergence = None
        try:
            run_state_machine_as_test(machine, settings=settings(
                max_examples=examples, stateful_step_count=steps, deadline=None, database=None,
                suppress_health_check=list(HealthCheck)))
        except Exception as exc:  # the falsifying example is the finding
            divergence = f"{type(exc).__name__}: {str(exc)[:500]}"
        return {"backend": backend, "examples": examples, "steps_per_example": steps,
                "divergences": 0 if divergence is None else 1, "divergence": divergence, "ok": divergence is None}
    finally:
        memory.close()
        target.close()


def main() -> int:
    parser = _common.parser(__doc__ or "")
    parser.add_argument("--examples", type=int, default=200)
    parser.add_argument("--steps", type=int, default=50)
    args = parser.parse_args()
    results = [run(b, examples=args.examples, steps=args.steps, pg_url=args.pg_url)
               for b in _common.backends_of(args)]
    return _common.report("stateful_model", results, args.json_out)


if __name__ == "__main__":
    raise SystemExit(main())
