"""Issue 21 item 3: another tenant's turns change neither which of a tenant's own turns
past-conversation search reads nor their scores (SQLite pre-ranked candidates with
FTS5's bm25() over the shared turn index)."""

from __future__ import annotations

import _common
import tenant_attack

from engram import FakeHashEmbedder, Memory, Settings


def test_another_tenants_turns_do_not_move_past_conversation_search(backend_name):
    target = _common.new_target(backend_name)
    try:
        with Memory.open(target.url, embedder=FakeHashEmbedder(), settings=Settings(auto_worker=False)) as memory:
            result = tenant_attack.turn_side_channel(memory, documents=300, own_turns=120)
        assert result["before"], result
        assert not result["changed"], result
    finally:
        target.close()
