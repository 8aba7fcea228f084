"""Benchmark loaders: LoCoMo, LongMemEval and MADial-Bench into one shape.

Every benchmark becomes a list of ``Unit``: one corpus (a conversation, a
question's haystack, a user's memory archive) with the queries asked of it and
the gold document ids. A missing or malformed file raises BenchmarkDataError
naming the file and the first bad record; nothing is silently dropped except
what the dataset's own README says to skip, and that is counted in ``notes``.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ..errors import BenchmarkDataError

DATASETS = ("locomo", "longmemeval", "madial")


@dataclass(frozen=True, slots=True)
class Doc:
    id: str  # the dataset's own id: "D1:3", "<session>_<turn>", a memory id
    text: str
    group: str | None = None  # session / thread id
    at: datetime | None = None  # when it was said (valid_from)
    position: int = 0  # order inside its group
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Query:
    id: str
    text: str
    gold: frozenset[str]  # Doc ids that hold the evidence
    category: str
    at: datetime | None = None  # when the question is asked
    gold_groups: frozenset[str] = frozenset()  # evidence sessions (LongMemEval)


@dataclass(frozen=True, slots=True)
class Unit:
    id: str
    docs: tuple[Doc, ...]
    queries: tuple[Query, ...]


@dataclass(frozen=True, slots=True)
class Dataset:
    name: str
    path: str
    units: tuple[Unit, ...]
    notes: Mapping[str, Any] = field(default_factory=dict)

    @property
    def n_queries(self) -> int:
        return sum(len(unit.queries) for unit in self.units)

    @property
    def n_docs(self) -> int:
        return sum(len(unit.docs) for unit in self.units)


def load(name: str, path: str | Path, **options: Any) -> Dataset:
    loaders = {"locomo": load_locomo, "longmemeval": load_longmemeval, "madial": load_madial}
    if name not in loaders:
        raise BenchmarkDataError(f"unknown benchmark {name!r}; use one of {', '.join(DATASETS)}")
    return loaders[name](path, **options)


# -- shared helpers ---------------------------------------------------------------------------


def _bad(path: Path, where: str, why: str) -> BenchmarkDataError:
    return BenchmarkDataError(f"{path}: {where}: {why}")


def _existing(path: str | Path) -> Path:
    file = Path(path).expanduser()
    if not file.exists():
        raise BenchmarkDataError(f"{file}: no such file")
    if not file.is_file():
        raise BenchmarkDataError(f"{file}: not a file")
    return file


def _read_json(file: Path) -> Any:
    opener = gzip.open if file.suffix == ".gz" else open
    try:
        with opener(file, "rt", encoding="utf-8") as handle:
            return json.load(handle)
    except json.JSONDecodeError as exc:
        raise _bad(file, f"line {exc.lineno} column {exc.colno}", f"not valid JSON ({exc.msg})") from None
    except (OSError, UnicodeDecodeError, EOFError) as exc:
        raise BenchmarkDataError(f"{file}: cannot read: {exc}") from None


def _read_jsonl(file: Path) -> Iterator[tuple[int, Any]]:
    try:
        with open(file, encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    yield number, json.loads(line)
                except json.JSONDecodeError as exc:
                    raise _bad(file, f"line {number}", f"not valid JSON ({exc.msg})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BenchmarkDataError(f"{file}: cannot read: {exc}") from None


def _need(record: Any, key: str, kind: type | tuple[type, ...], file: Path, where: str) -> Any:
    if not isinstance(record, dict):
        raise _bad(file, where, f"expected an object, got {type(record).__name__}")
    if key not in record:
        raise _bad(file, where, f"missing field {key!r}")
    value = record[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise _bad(file, where, f"field {key!r} should be {names}, got {type(value).__name__}")
    return value


_LOCOMO_DATE = re.compile(r"^\s*(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+(\w+),?\s+(\d{4})\s*$", re.IGNORECASE)
_MONTHS = {m: i for i, m in enumerate(
    ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
     "november", "december"), start=1)}


def parse_locomo_date(text: str) -> datetime | None:
    """'1:56 pm on 8 May, 2023' → an aware datetime (UTC); None when it does not parse."""
    match = _LOCOMO_DATE.match(text or "")
    if not match:
        return None
    hour, minute, half, day, month, year = match.groups()
    month_number = _MONTHS.get(month.lower())
    if month_number is None:
        return None
    hour_24 = int(hour) % 12 + (12 if half.lower() == "pm" else 0)
    try:
        return datetime(int(year), month_number, int(day), hour_24, int(minute), tzinfo=UTC)
    except ValueError:
        return None


def parse_longmemeval_date(text: str) -> datetime | None:
    """'2023/05/14 (Sun) 09:58' → an aware datetime (UTC)."""
    match = re.match(r"^\s*(\d{4})/(\d{2})/(\d{2})(?:\s*\(\w+\))?\s*(\d{1,2}):(\d{2})", text or "")
    if not match:
        return None
    try:
        year, month, day, hour, minute = (int(part) for part in match.groups())
        return datetime(year, month, day, hour, minute, tzinfo=UTC)
    except ValueError:
        return None


def parse_day(text: str) -> datetime | None:
    try:
        return datetime.strptime(str(text).strip(), "%Y-%m-%d").replace(tzinfo=UTC)
    except ValueError:
        return None


TURN_SECONDS = 30


def _turn_time(session_start: datetime | None, position: int) -> datetime | None:
    """The datasets date sessions, not turns; turns are placed 30 s apart so that
    their order (and who spoke next to whom) is kept in valid_from."""
    return session_start + timedelta(seconds=TURN_SECONDS * position) if session_start else None


# -- LoCoMo -----------------------------------------------------------------------------------

_DIA_ID = re.compile(r"^D\d+:\d+$")


def locomo_turn_text(turn: Mapping[str, Any]) -> str:
    """What a memory of one turn holds: who said it, what, and the photo they shared."""
    text = f"{turn['speaker']}: {turn['text']}".strip()
    caption = turn.get("blip_caption")
    if isinstance(caption, str) and caption.strip():
        text += f" [shared a photo: {caption.strip()}]"
    return text


def load_locomo(path: str | Path) -> Dataset:
    file = _existing(path)
    data = _read_json(file)
    if not isinstance(data, list) or not data:
        raise _bad(file, "top level", "expected a non-empty list of conversations")
    units = []
    malformed = skipped_evidence = no_evidence = 0
    for index, sample in enumerate(data):
        where = f"conversation #{index}"
        sample_id = str(_need(sample, "sample_id", (str, int), file, where))
        where = f"conversation {sample_id!r}"
        conversation = _need(sample, "conversation", dict, file, where)
        qa = _need(sample, "qa", list, file, where)
        docs = _locomo_docs(conversation, file, where)
        known = {doc.id for doc in docs}
        queries = []
        for number, item in enumerate(qa):
            q_where = f"{where}, qa #{number}"
            question = _need(item, "question", str, file, q_where)
            evidence = _need(item, "evidence", list, file, q_where)
            category = _need(item, "category", int, file, q_where)
            gold: set[str] = set()
            for raw in evidence:
                if not isinstance(raw, str):
                    raise _bad(file, q_where, f"evidence ids should be strings, got {raw!r}")
                parts = [p.strip() for p in raw.split(";") if p.strip()]
                malformed += len(parts) > 1
                for part in parts:
                    if _DIA_ID.match(part) and part in known:
                        gold.add(part)
                    else:
                        skipped_evidence += 1
            if not gold:
                no_evidence += 1
                continue
            queries.append(Query(f"{sample_id}/q{number}", question, frozenset(gold), str(category)))
        units.append(Unit(sample_id, tuple(docs), tuple(queries)))
    notes = {"evidence_ids_split": malformed, "evidence_ids_skipped": skipped_evidence,
             "questions_without_evidence": no_evidence}
    return Dataset("locomo", str(file), tuple(units), notes)


def _locomo_docs(conversation: dict, file: Path, where: str) -> list[Doc]:
    sessions = sorted(
        (int(key.split("_")[1]), key) for key in conversation if re.fullmatch(r"session_\d+", key)
    )
    if not sessions:
        raise _bad(file, where, "conversation has no session_N lists")
    docs = []
    for number, key in sessions:
        turns = conversation[key]
        if not isinstance(turns, list):
            raise _bad(file, f"{where}, {key}", f"expected a list of turns, got {type(turns).__name__}")
        at = parse_locomo_date(str(conversation.get(f"{key}_date_time", "")))
        for position, turn in enumerate(turns):
            t_where = f"{where}, {key} turn #{position}"
            dia_id = _need(turn, "dia_id", str, file, t_where)
            _need(turn, "speaker", str, file, t_where)
            _need(turn, "text", str, file, t_where)
            docs.append(Doc(dia_id, locomo_turn_text(turn), f"S{number}", _turn_time(at, position), position,
                            {"dia_id": dia_id, "session": number, "speaker": turn["speaker"]}))
    return docs


# -- LongMemEval ------------------------------------------------------------------------------


def load_longmemeval(path: str | Path, *, roles: tuple[str, ...] = ("user",)) -> Dataset:
    """One unit per question over its haystack. ``roles`` picks the turns indexed:
    the official protocol indexes user turns only; evidence is the ``has_answer``
    turns among them. Abstention questions (``_abs``) are skipped."""
    file = _existing(path)
    data = _read_json(file)
    if not isinstance(data, list) or not data:
        raise _bad(file, "top level", "expected a non-empty list of questions")
    units = []
    abstention = no_turn_evidence = 0
    duplicates = {"merged": 0, "kept_apart": 0}
    questions_with_duplicates: set[str] = set()
    for index, item in enumerate(data):
        where = f"question #{index}"
        qid = str(_need(item, "question_id", str, file, where))
        where = f"question {qid!r}"
        question = _need(item, "question", str, file, where)
        qtype = _need(item, "question_type", str, file, where)
        session_ids = _need(item, "haystack_session_ids", list, file, where)
        sessions = _need(item, "haystack_sessions", list, file, where)
        dates = _need(item, "haystack_dates", list, file, where)
        answer_sessions = _need(item, "answer_session_ids", list, file, where)
        if not len(session_ids) == len(sessions) == len(dates):
            raise _bad(file, where, "haystack_session_ids, haystack_sessions and haystack_dates differ in length")
        if qid.endswith("_abs"):
            abstention += 1
            continue
        docs = []
        gold: set[str] = set()
        seen: dict[str, list[list]] = {}  # session id -> its copies' turns (a haystack may list one twice)
        for session_id, session, date in zip(session_ids, sessions, dates):
            at = parse_longmemeval_date(str(date))
            if not isinstance(session, list):
                raise _bad(file, f"{where}, session {session_id!r}", "expected a list of turns")
            key = str(session_id)
            copies = seen.setdefault(key, [])
            if copies:
                questions_with_duplicates.add(qid)
                if session in copies:  # the same session listed again: indexed once
                    duplicates["merged"] += 1
                    continue
                duplicates["kept_apart"] += 1  # same id, other turns: own turn ids, the same session
            copy = f"~{len(copies) + 1}" if copies else ""
            copies.append(session)
            for position, turn in enumerate(session):
                t_where = f"{where}, session {session_id!r} turn #{position}"
                role = _need(turn, "role", str, file, t_where)
                content = _need(turn, "content", str, file, t_where)
                if role not in roles or not content.strip():
                    continue
                doc_id = f"{key}{copy}_{position + 1}"
                docs.append(Doc(doc_id, content, key, _turn_time(at, position), position,
                                {"session": key, "turn": position + 1, "role": role}))
                if turn.get("has_answer") is True:
                    gold.add(doc_id)
        if not gold:  # e.g. single-session-assistant with user turns indexed: nothing to find
            no_turn_evidence += 1
            continue
        if not all(isinstance(s, str) for s in answer_sessions):
            raise _bad(file, where, "answer_session_ids should be strings")
        gold_groups = frozenset(doc.group for doc in docs if doc.id in gold and doc.group)
        asked = parse_longmemeval_date(str(item.get("question_date", "")))
        units.append(Unit(qid, tuple(docs), (Query(qid, question, frozenset(gold), qtype, asked, gold_groups),)))
    notes = {"abstention_skipped": abstention, "roles_indexed": list(roles),
             "questions_without_indexed_evidence": no_turn_evidence,
             # a haystack listing one session twice: identical copies indexed once, differing ones apart
             "duplicate_sessions_merged": duplicates["merged"],
             "duplicate_sessions_kept_apart": duplicates["kept_apart"],
             "questions_with_duplicate_sessions": len(questions_with_duplicates)}
    return Dataset("longmemeval", str(file), tuple(units), notes)


# -- MADial-Bench -----------------------------------------------------------------------------

_SPEAKER = re.compile(r'^\s*<([^>]+)>\s*:\s*"?(.*?)"?\s*$', re.DOTALL)


def dialogue_lines(lines: list[str]) -> list[tuple[str, str]]:
    """Dialogue lines as (speaker, utterance); <BOD>/<EOD> markers dropped."""
    out = []
    for line in lines:
        stripped = line.strip()
        if stripped in ("<BOD>", "<EOD>", ""):
            continue
        match = _SPEAKER.match(stripped)
        out.append((match.group(1), match.group(2).strip()) if match else ("", stripped))
    return out


def madial_memory_path(dialogue_path: Path) -> Path:
    name = dialogue_path.name.replace("_dialogue_dev", "_memory").replace("_dialogue_test", "_memory")
    name = name.replace("_dialogue", "_memory")
    return dialogue_path.with_name(name)


def load_madial(path: str | Path, *, memory_path: str | Path | None = None) -> Dataset:
    """``path`` is the dialogue file (madial_<lang>_dialogue_*.jsonl); the memory
    archive is found beside it (madial_<lang>_memory.jsonl) unless given. The query
    is the dialogue before the (first) test turn; the corpus is that user's memories."""
    dialogue_file = _existing(path)
    memory_file = _existing(memory_path) if memory_path else _existing(madial_memory_path(dialogue_file))
    memories = _madial_memories(memory_file)
    owners, owner_source = _madial_owners(memories, memory_file)
    by_user: dict[str, list[Doc]] = {}
    for memory_id, memory in memories.items():
        user = owners.get(memory_id, "*")
        text = str(memory["event"]).strip()
        metadata = {key: memory[key] for key in ("scene", "emotion", "time") if key in memory}
        by_user.setdefault(user, []).append(
            Doc(memory_id, text, None, parse_day(memory.get("time", "")), 0, {"memory_id": memory_id, **metadata}))
    queries_by_user: dict[str, list[Query]] = {}
    for number, item in _read_jsonl(dialogue_file):
        where = f"line {number}"
        lines = _need(item, "dialogue", list, dialogue_file, where)
        turns = _need(item, "test-turn", list, dialogue_file, where)
        relevant = _need(item, "relevant-id", list, dialogue_file, where)
        if not turns or not all(isinstance(t, int) and not isinstance(t, bool) for t in turns):
            raise _bad(dialogue_file, where, "test-turn should be a non-empty list of line numbers")
        if min(turns) < 1 or min(turns) > len(lines):
            raise _bad(dialogue_file, where, f"test-turn {min(turns)} is outside the dialogue")
        gold = {str(r) for r in relevant}
        missing = sorted(gold - memories.keys())
        if missing:
            raise _bad(dialogue_file, where, f"relevant-id {missing[0]} is not in {memory_file.name}")
        user = str(item.get("user-id", "*")) if owner_source != "none" else "*"
        context = dialogue_lines([str(line) for line in lines[: min(turns)]])
        if not context:
            raise _bad(dialogue_file, where, "no dialogue before the test turn")
        text = "\n".join(f"{speaker}: {utterance}" if speaker else utterance for speaker, utterance in context)
        qid = str(item.get("id", number))
        queries_by_user.setdefault(user, []).append(Query(qid, text, frozenset(gold), f"user {user}"))
    units = []
    for user, queries in sorted(queries_by_user.items()):
        docs = by_user.get(user, [])
        strays = [q for q in queries if not q.gold <= {d.id for d in docs}]
        if strays:
            raise _bad(dialogue_file, f"dialogue {strays[0].id}", f"relevant memories are not user {user}'s")
        units.append(Unit(f"user-{user}", tuple(docs), tuple(queries)))
    lang = "zh" if "_zh_" in dialogue_file.name else "en" if "_en_" in dialogue_file.name else "?"
    notes = {"memory_file": str(memory_file), "language": lang, "memory_owner": owner_source}
    return Dataset("madial", str(dialogue_file), tuple(units), notes)


def _madial_memories(file: Path) -> dict[str, dict]:
    memories: dict[str, dict] = {}
    for number, item in _read_jsonl(file):
        where = f"line {number}"
        if not isinstance(item, dict) or len(item) != 1:
            raise _bad(file, where, "expected one {id: memory} object per line")
        (memory_id, memory), = item.items()
        _need(memory, "event", str, file, f"{where} (memory {memory_id})")
        memories[str(memory_id)] = memory
    if not memories:
        raise _bad(file, "top level", "no memories")
    return memories


def _madial_owners(memories: dict[str, dict], file: Path) -> tuple[dict[str, str], str]:
    """Which user each memory belongs to. The English archive has no user-id; the
    Chinese archive beside it shares the ids, so it is borrowed when present."""
    if all("user-id" in m for m in memories.values()):
        return {key: str(m["user-id"]) for key, m in memories.items()}, "own"
    for other in sorted(file.parent.glob("madial_*_memory.jsonl")):
        if other == file:
            continue
        owners = {}
        for _, item in _read_jsonl(other):
            if isinstance(item, dict) and len(item) == 1:
                (memory_id, memory), = item.items()
                if isinstance(memory, dict) and "user-id" in memory:
                    owners[str(memory_id)] = str(memory["user-id"])
        if memories.keys() <= owners.keys():
            return {key: owners[key] for key in memories}, other.name
    return {}, "none"
