"""How a record's personal data is shown over HTTP.

- ``stored`` (the default): the content as the write path stored it (its PII policy
  already masked or encrypted what it must) — what applications read.
- ``masked`` (``?mask=true``, what the web inspector asks for): every piece of
  personal data still visible in the text (an allowed e-mail, a phone number written
  before a policy existed) is shown as ``[EMAIL]``, ``[PHONE]`` …, and the encrypted
  originals are left out of the metadata (only their tokens are listed).

Decrypting them is not a view: it is an audited act of a key with the ``reveal``
permission (issue 14), which the inspector offers when the server has it.
"""

from __future__ import annotations

from dataclasses import replace
from enum import StrEnum

from ..model import MemoryRecord, SearchHit, Version, freeze_mapping
from ..pii import ENCRYPTED_KEY as ENCRYPTED
from ..pii import find_pii


class View(StrEnum):
    STORED = "stored"
    MASKED = "masked"


def mask_text(text: str) -> str:
    """Each piece of personal data found in ``text`` replaced by its kind: ``[EMAIL]``."""
    out, cursor = [], 0
    for finding in find_pii(text):
        if finding.marker:  # already a marker ("[PHONE]", "[PHONE#1]"): shown as it is
            continue
        out += [text[cursor : finding.start], f"[{finding.kind.upper()}]"]
        cursor = finding.end
    return "".join(out) + text[cursor:]


def shown(record: MemoryRecord, view: View) -> MemoryRecord:
    if view is View.STORED:
        return record
    metadata = {key: value for key, value in record.metadata.items() if key != ENCRYPTED}
    if ENCRYPTED in record.metadata:
        metadata[ENCRYPTED] = sorted(dict(record.metadata[ENCRYPTED]))  # which tokens, never the ciphertext
    return replace(record, content=mask_text(record.content), metadata=freeze_mapping(metadata))


def shown_hit(hit: SearchHit, view: View) -> SearchHit:
    return hit if view is View.STORED else replace(hit, record=shown(hit.record, view))


def shown_version(version: Version, view: View) -> Version:
    if view is View.STORED or version.record is None:
        return version
    return replace(version, record=shown(version.record, view))
