"""Scheduled lifecycle work: expiry and consolidation."""

from datetime import timedelta

from engram import Operation, Status


def test_expired_and_no_longer_valid_memories_become_expired_versions(memory, alice, clock):
    door = memory.remember("Door code is 4711", alice, expires_at=clock.now() + timedelta(hours=1))
    trip = memory.remember("Is in Paris this week", alice, valid_to=clock.now() + timedelta(days=7))
    lasting = memory.remember("Likes jazz", alice)
    assert memory.maintenance.run().expired == 0
    clock.advance(days=8)
    report = memory.maintenance.run()
    assert report.expired == 2
    for record in (door, trip):
        current = memory.get(record.id, alice)
        assert current.status is Status.EXPIRED and current.version == 2
        assert memory.history(record.id, alice)[-1].operation is Operation.EXPIRE
    assert memory.get(lasting.id, alice).status is Status.ACTIVE
    assert memory.maintenance.run().expired == 0


def test_near_identical_duplicates_fold_into_the_best_one(real_memory, alice, bob):
    low = real_memory.remember("Prefers concise reports", alice, kind="preference", importance=0.4)
    high = real_memory.remember("Prefers concise reports.", alice, kind="preference", importance=0.9)
    other_kind = real_memory.remember("Prefers concise reports", alice, kind="rule")
    elsewhere = real_memory.remember("Prefers concise reports", bob, kind="preference")
    different = real_memory.remember("Allergic to peanuts", alice, kind="preference")
    assert real_memory.maintenance.run().consolidated == 1
    folded = real_memory.get(low.id, alice)
    assert folded.status is Status.SUPERSEDED and folded.superseded_by == high.id
    for record, scope in ((high, alice), (other_kind, alice), (elsewhere, bob), (different, alice)):
        assert real_memory.get(record.id, scope).status is Status.ACTIVE
    assert "consolidated" in real_memory.history(low.id, alice)[-1].reason
