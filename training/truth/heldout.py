"""Held-out figures on sets no writer saw and nothing was tuned on (report only):
tests/data/extraction_*.jsonl and the outcome benchmark's single utterances, changes and
spoken forgets (src/engram/eval/outcome/data/{dev,heldout}/*-utterances.json)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from engram.pipeline.judge.learned import LearnedJudge
from engram.pipeline.judge.subjects import same_subject
from engram.slots import Judgement, Utterance

from .baseline import rule_judgements
from .metrics import fmt, ratio, supersedes, table

ROOT = Path(__file__).parents[2]
EXTRACTION = sorted((ROOT / "tests" / "data").glob("extraction_*.jsonl"))
OUTCOME = ROOT / "src" / "engram" / "eval" / "outcome" / "data"
DURABLE_KINDS = {"fact", "preference", "rule"}  # a to-do, conclusion or episode is left out of both counts


def extraction_lines(path: Path) -> list[tuple[str, str, bool | None]]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        kinds = {e["kind"] for e in item["expected"]}
        durable = None if kinds - DURABLE_KINDS else bool(kinds)
        out.append((item["text"], item["lang"], durable))
    return out


def utterance_lines(path: Path) -> list[tuple[str, str, bool | None]]:
    lang = "zh" if "-zh-" in path.name else "en"
    items = json.loads(path.read_text(encoding="utf-8"))["utterances"]
    return [(u["text"], lang, None if u.get("kind") == "todo" else bool(u["memory"])) for u in items]


def keep_drop(lines: Sequence[tuple[str, str, bool | None]], said: Sequence[Judgement]) -> list[str]:
    kept = [(d, j.durable) for (_, _, d), j in zip(lines, said) if d is not None]
    durable = [k for d, k in kept if d]
    junk = [k for d, k in kept if not d]
    said_durable = [d for d, k in kept if k]
    return [str(len(durable)), fmt(ratio(sum(durable), len(durable))), fmt(ratio(sum(said_durable), len(said_durable))),
            str(len(junk)), fmt(ratio(sum(not k for k in junk), len(junk)))]


def judge_texts(judge: LearnedJudge, texts: Sequence[str]) -> list[Judgement]:
    return judge.judge(list(texts)) if texts else []


def statements_section(judge: LearnedJudge) -> None:
    sets = [(p.stem, extraction_lines(p)) for p in EXTRACTION]
    sets += [(p.stem, utterance_lines(p)) for p in sorted(OUTCOME.glob("*/*-utterances.json"))]
    header = ("durable", "kept", "kept precision", "no fact", "dropped")
    lines = []
    for name, items in sets:
        for lang in ("en", "zh"):
            chosen = [i for i in items if i[1] == lang]
            if not chosen:
                continue
            texts = [t for t, _, _ in chosen]
            lines.append((f"{name} {lang} judge", keep_drop(chosen, judge_texts(judge, texts))))
            lines.append((f"{name} {lang} rules", keep_drop(chosen, rule_judgements(texts))))
    print(table("held-out statements", header, lines), "\n")


def changes_section(judge: LearnedJudge) -> None:
    lines = []
    for path in sorted(OUTCOME.glob("*/*-utterances.json")):
        changes = json.loads(path.read_text(encoding="utf-8"))["changes"]
        before = judge_texts(judge, [c["before"] for c in changes])
        after = judge_texts(judge, [c["after"] for c in changes])
        sup = [supersedes(b, a) for c, b, a in zip(changes, before, after) if c["expect"] == "supersede"]
        ref = [same_subject(b.subject, a.subject) and b.slot == a.slot and a.durable
               for c, b, a in zip(changes, before, after) if c["expect"] == "refine"]
        lines.append((path.stem, [str(len(sup)), fmt(ratio(sum(sup), len(sup))), str(len(ref)),
                                  fmt(ratio(sum(ref), len(ref)))]))
    print(table("held-out changes", ("supersede", "caught", "refine", "same slot"), lines), "\n")


def forgets_section(judge: LearnedJudge) -> None:
    lines = []
    for path in sorted(OUTCOME.glob("*/*-utterances.json")):
        forgets = json.loads(path.read_text(encoding="utf-8"))["forgets"]
        said = judge_texts(judge, [f["forget"] for f in forgets])
        setups = [s for f in forgets for s in f["setup"]]
        setup_said = judge_texts(judge, setups)
        rules = rule_judgements([f["forget"] for f in forgets])
        lines.append((path.stem, [str(len(forgets)), fmt(ratio(sum(j.utterance is Utterance.FORGET for j in said),
                                                               len(said))),
                                  fmt(ratio(sum(j.utterance is Utterance.FORGET for j in rules), len(rules))),
                                  str(len(setups)),
                                  str(sum(j.utterance is Utterance.FORGET for j in setup_said))]))
    print(table("held-out spoken forgets", ("forgets", "judge", "rules", "setup lines", "setup judged forget"), lines),
          "\n")


def heldout_report(judge: LearnedJudge) -> None:
    statements_section(judge)
    changes_section(judge)
    forgets_section(judge)
