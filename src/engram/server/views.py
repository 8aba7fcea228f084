"""How a record's personal data is shown over HTTP.

- ``stored`` (the default): the content as the write path stored it (its PII policy
  already masked or encrypted what it must) — what applications read.
- ``masked`` (``?mask=true``, what the web inspector asks for, on every endpoint):
  every piece of personal data still visible in the answer (an allowed e-mail, a phone
  number written before a policy existed), in any field — content, tags, category,
  metadata keys and values, version reasons, review notes, audit details, thread and
  message ids — is shown as ``[EMAIL]``, ``[PHONE]`` …, and the encrypted originals are
  left out of the metadata (only their tokens are listed). ``mask_json`` does it to the
  whole JSON answer.

Decrypting them is not a view: it is an audited act of a key with the ``reveal``
permission (issue 14), which the inspector offers when the server has it.
"""

from __future__ import annotations

from dataclasses import replace
from enum import StrEnum
from typing import Any

from ..model import MemoryRecord, SearchHit, Version, freeze_mapping
from ..pii import ENCRYPTED_KEY as ENCRYPTED
from ..pii import find_pii, is_identifier


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


def mask_json(value: Any) -> Any:
    """A JSON answer with every string (keys included) masked and ciphertexts left out; engram's
    own ids stay as they are (the inspector acts on them)."""
    if isinstance(value, str):
        return value if is_identifier(value) else mask_text(value)
    if isinstance(value, list):
        return [mask_json(item) for item in value]
    if isinstance(value, dict):
        return {mask_text(key): sorted(item) if key == ENCRYPTED and isinstance(item, dict) else mask_json(item)
                for key, item in value.items()}
    return value


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
