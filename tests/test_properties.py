"""Property-based invariants: scope isolation and version history."""

import itertools
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram import FakeClock, FakeHashEmbedder, Memory, Operation, Scope, Status
from engram.model import FORBIDDEN_IN_LABELS, canonical_label
from engram.store.sqlite import SQLiteStore

labels = st.text(
    alphabet=st.characters(blacklist_categories=tuple(FORBIDDEN_IN_LABELS)), min_size=1, max_size=12
).filter(lambda s: bool(s.strip()) and canonical_label(s) == s)
namespaces = st.lists(st.sampled_from(["u", "u.x", "张三", "a@b.c", "u/v"]) | labels, min_size=1, max_size=3).map(tuple)


def fresh_memory() -> Memory:
    path = Path(tempfile.mkdtemp()) / "prop.db"
    return Memory(SQLiteStore(str(path)), embedder=FakeHashEmbedder(), clock=FakeClock())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["acme", "globex"]), namespaces), min_size=1, max_size=6))
def test_a_scope_sees_exactly_its_own_records(placements):
    memory = fresh_memory()
    try:
        written = {}
        for i, (tenant, ns) in enumerate(placements):
            record = memory.remember(f"shared word item{i}", Scope(tenant, ns))
            written[record.id] = record.scope
        for tenant, ns in set(placements):
            scope = Scope(tenant, ns)
            expected_exact = {rid for rid, s in written.items() if s == scope}
            expected_tree = {rid for rid, s in written.items() if scope.contains(s)}
            assert {h.record.id for h in memory.search("shared word", scope, k=50)} == expected_exact
            assert {r.id for r in memory.list(scope, limit=100).items} == expected_exact
            found = memory.search("shared word", scope, k=50, include_descendants=True)
            assert {h.record.id for h in found} == expected_tree
    finally:
        memory.close()


edit = st.one_of(
    st.tuples(st.just("update"), st.text(alphabet="abcdef ", min_size=1, max_size=20).filter(str.strip)),
    st.tuples(st.just("importance"), st.floats(0, 1)),
    st.tuples(st.just("forget"), st.none()),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(edit, max_size=8))
def test_history_is_contiguous_and_matches_audit(edits):
    memory = fresh_memory()
    scope = Scope("acme", ("users", "alice"))
    try:
        record = memory.remember("start", scope)
        for action, value in edits:
            if memory.get(record.id, scope).status is Status.DELETED:
                break
            if action == "update":
                memory.update(record.id, scope, content=value)
            elif action == "importance":
                memory.update(record.id, scope, importance=value)
            else:
                memory.forget(record.id, scope)
        current = memory.get(record.id, scope)
        history = memory.history(record.id, scope)
        assert [v.version for v in history] == list(range(1, current.version + 1))
        assert history[-1].record == current
        assert history[0].operation is Operation.CREATE
        audit_versions = [e.version for e in memory.audit.list(scope, record_id=record.id)]
        assert audit_versions == [v.version for v in history]
        for older, newer in itertools.pairwise(history):
            assert newer.at >= older.at
    finally:
        memory.close()
