"""Namespace labels under the PII policy (issue 28, item 5): an e-mail or a phone number
used as a user id was kept in plain text under a policy that masks e-mails, in the file,
the export and HTTP answers. A label is looked up as given, so it can be neither masked
nor encrypted: something new written under a label holding personal data the tenant's
policy does not allow is refused (PIIForbiddenError); ``engram.pseudonym`` gives the
application a stable keyed pseudonym to use instead."""

from __future__ import annotations

import io

import pytest

from engram import MemoryDraft, PIIForbiddenError, PIIPolicies, PIIPolicy, Scope, pseudonym

pytestmark = [pytest.mark.records]  # the store roles it checks (conftest.py, ROLE_MARKERS)

STRICT = PIIPolicies(PIIPolicy(default="mask", actions={"email": "mask", "phone": "encrypt", "secret": "forbid"}))
KEY = "a-pseudonym-key-of-32-characters"
EMAIL, PHONE = "ana@example.com", "+44 20 7946 0958"


@pytest.mark.parametrize("user", [EMAIL, PHONE, "13812345678"])
def test_nothing_new_is_written_under_a_label_the_policy_does_not_allow(backend, user):
    memory = backend.memory(pii=STRICT)
    scope = Scope.for_user("acme", user)
    writes = [lambda: memory.remember("Allergic to peanuts", scope),
              lambda: memory.remember_many([MemoryDraft("Lives in Porto")], scope),
              lambda: memory.add([{"role": "user", "content": "I am allergic to peanuts and I live in Porto"}],
                                 scope, force=True),
              lambda: memory.threads.record([{"role": "user", "content": "hello"}], scope)]
    for write in writes:
        with pytest.raises(PIIForbiddenError) as refused:
            write()
        assert user not in str(refused.value) and "pseudonym" in str(refused.value)
    assert memory.stats("acme").records == 0 and memory.threads.list(scope) == []
    exported = io.StringIO()
    memory.transfer.export_to(exported, Scope("acme"))
    assert user not in exported.getvalue()


def test_a_pseudonym_names_the_same_user_every_time(backend):
    memory = backend.memory(pii=STRICT)
    alias = pseudonym(EMAIL, KEY)
    assert alias == pseudonym(EMAIL, KEY) != pseudonym("bob@example.com", KEY) and EMAIL not in alias
    stored = memory.remember("Allergic to peanuts", Scope.for_user("acme", alias))
    assert [r.id for r in memory.profile(Scope.for_user("acme", pseudonym(EMAIL, KEY)))] == [stored.id]


def test_labels_the_policy_allows_and_numeric_ids_are_kept_as_given(backend):
    memory = backend.memory()  # the default policy allows e-mails
    assert memory.remember("Likes tea", Scope.for_user("acme", EMAIL)).scope.namespace == ("users", EMAIL)
    strict = backend.memory(pii=STRICT)
    for user_id in ("5012345678", "user-5012345678", "123456789012345678", "张三"):
        assert strict.remember("Likes tea", Scope.for_user("acme", user_id)).scope.namespace == ("users", user_id)


def test_memories_kept_under_such_a_label_before_the_policy_are_never_stuck(backend):
    before = backend.memory().remember("Likes tea", Scope.for_user("acme", EMAIL))
    memory = backend.memory(pii=STRICT)
    scope = Scope.for_user("acme", EMAIL)
    assert memory.update(before.id, scope, importance=0.9).importance == 0.9
    assert memory.forget(before.id, scope).status.value == "deleted"
    with pytest.raises(PIIForbiddenError):
        memory.remember("Likes coffee", scope)
