"""Keys at rest: MultiFernet-style key lists, a key-provider hook, rotation through the
write core while reads keep working, and audited reveal."""

import sqlite3

import pytest

pytest.importorskip("cryptography")
from cryptography.fernet import Fernet

from engram import ConfigError, FakeHashEmbedder, Memory, Operation, PIIPolicies, PIIPolicy, Scope, Settings
from engram.governance.keys import fingerprint
from engram.store.sqlite import SQLiteStore

ENCRYPT = PIIPolicy(actions={"phone": "encrypt", "email": "mask", "secret": "forbid"})
OLD, NEW = Fernet.generate_key().decode(), Fernet.generate_key().decode()


def _open(path, clock, pii=ENCRYPT) -> Memory:
    return Memory(SQLiteStore(path), embedder=FakeHashEmbedder(), clock=clock, pii=pii,
                  settings=Settings(auto_worker=False))


def test_rotation_re_encrypts_with_the_new_key_while_reads_keep_working(db_path, clock, alice, monkeypatch):
    monkeypatch.setenv("ENGRAM_ENCRYPTION_KEY", OLD)
    with _open(db_path, clock) as memory:
        record = memory.remember("Call me on 13812345678, mail a@b.example", alice)
        assert record.content == "Call me on [PHONE#1], mail [EMAIL]"
        monkeypatch.setenv("ENGRAM_ENCRYPTION_KEY", f"{NEW},{OLD}")  # the new key first, the old one still readable
        assert memory.keys.reveal(record.id, alice, actor="dpo").content == "Call me on 13812345678, mail [EMAIL]"
        before = memory.keys.status("acme")
        assert before.keys == (fingerprint(NEW), fingerprint(OLD)) and before.values == {fingerprint(OLD): 1}
        [rotation] = memory.keys.rotate("acme", actor="ops")
        assert (rotation.key, rotation.records, rotation.values, rotation.unreadable) == (fingerprint(NEW), 1, 1, 0)
        assert memory.keys.status("acme").values == {fingerprint(NEW): 1}
        assert memory.keys.rotate("acme", actor="ops")[0].records == 0  # nothing left under the old key
        versions = memory.history(record.id, alice)
        assert [(v.operation, v.actor) for v in versions] == [(Operation.CREATE, "app"), (Operation.REKEY, "ops")]
        assert versions[1].record.content == record.content
        summary = [e for e in memory.audit.list(Scope("acme"), operation="rekey") if e.record_id is None]
        assert summary[0].detail["records"] == 1 and summary[0].detail["key"] == fingerprint(NEW)
        monkeypatch.setenv("ENGRAM_ENCRYPTION_KEY", NEW)  # the old key dropped
        assert memory.keys.reveal(record.id, alice, actor="dpo").content == "Call me on 13812345678, mail [EMAIL]"
    raw = sqlite3.connect(db_path).execute("SELECT metadata FROM memories").fetchone()[0]
    assert "13812345678" not in raw


def test_a_key_provider_gives_each_tenant_its_own_keys(db_path, clock, monkeypatch):
    monkeypatch.delenv("ENGRAM_ENCRYPTION_KEY", raising=False)
    keys = {"acme": [OLD], "globex": [NEW]}
    policies = PIIPolicies(default=ENCRYPT, key_provider=lambda tenant: keys.get(tenant))
    acme, globex = Scope("acme", ("users", "a")), Scope("globex", ("users", "a"))
    with _open(db_path, clock, policies) as memory:
        one = memory.remember("Phone 13812345678", acme)
        two = memory.remember("Phone 13912345678", globex)
        assert memory.keys.status("acme").values == {fingerprint(OLD): 1}
        assert memory.keys.status("globex").values == {fingerprint(NEW): 1}
        assert memory.keys.reveal(two.id, globex, actor="dpo").content == "Phone 13912345678"
        keys["acme"] = [NEW, OLD]
        memory.keys.rotate(actor="ops")
        keys["acme"] = [NEW]
        assert memory.keys.reveal(one.id, acme, actor="dpo").content == "Phone 13812345678"
        with pytest.raises(ConfigError, match="no encryption key"):
            memory.keys.status("initech")


def test_background_jobs_decrypt_with_the_tenants_keys(db_path, clock, alice, monkeypatch):
    monkeypatch.delenv("ENGRAM_ENCRYPTION_KEY", raising=False)
    policies = PIIPolicies(default=ENCRYPT, key_provider=lambda tenant: [NEW])
    with _open(db_path, clock, policies) as memory:
        memory.add(["My phone number is 13812345678."], alice, background=True, force=True)
        assert memory.jobs.drain() == 1
        job = memory.jobs.list("acme")[0]
        assert job.status.value == "done", job.last_error


def test_reveal_is_audited_and_says_what_was_masked_for_good(db_path, clock, alice, monkeypatch):
    monkeypatch.setenv("ENGRAM_ENCRYPTION_KEY", NEW)
    with _open(db_path, clock) as memory:
        record = memory.remember("Phone 13812345678, mail a@b.example", alice, metadata={"note": "13912345678"})
        shown = memory.keys.reveal(record.id, alice, actor="dpo@acme", reason="subject access request")
        assert shown.content == "Phone 13812345678, mail [EMAIL]" and shown.metadata == {"note": "13912345678"}
        assert (shown.revealed, shown.masked) == (("phone",), ("email",))
        [event] = memory.audit.list(alice, operation="reveal")
        assert (event.actor, event.record_id, event.detail["reason"], event.detail["values"]) == (
            "dpo@acme", record.id, "subject access request", 2)
        with pytest.raises(Exception, match="actor"):
            memory.keys.reveal(record.id, alice, actor="")
        plain = memory.remember("Nothing personal", alice)
        assert memory.keys.reveal(plain.id, alice, actor="dpo").content == "Nothing personal"
