"""The user's own words in a message: what they quote or paste is not theirs.

"> " lines, text in quotes, what follows a colon that introduces someone else's text
("summarise this:", "he wrote:", "帮我翻译一下："), and the body of a multi-line pasted block
(an e-mail, a chat log) after its first line are left out, so nothing in them is read as the
user asking the assistant to forget.
"""

from __future__ import annotations

import re

_QUOTED_LINE = re.compile(r"^\s*(?:>|＞|\|)")
_QUOTED_SPAN = re.compile(r"\"[^\"\n]{3,}\"|“[^”]{3,}”|「[^」]{2,}」|『[^』]{2,}』|‘[^’]{6,}’")
# a colon that introduces someone else's text: "summarise this:", "he wrote:", "帮我翻译一下："
_INTRODUCER = re.compile(
    r"(?:summar|sumar|translat|rewrite|re-write|proofread|polish|paraphras|shorten|reply|respond|answer|draft"
    r"|check|read|look at|fix|edit|format|review|analy[sz]|explain|tl;?dr|wrote|writes|said|says|sent|texted"
    r"|messaged|posted|forwarded|pasted|quote|here'?s|here is|here are|below|following|this email|this e-mail"
    r"|this message|this text|this note|the email|the message|subject"
    r"|总结|概括|翻译|改写|润色|改一下|看看|看下|看一下|回复|写道|说道|说：|发来|发了|转发|如下|下面|以下|这段|这封|邮件|原文"
    r"|摘要|整理|帮我)[^:：\n]{0,60}[:：]",
    re.IGNORECASE,
)
_BLOCK_MARKERS = re.compile(
    r"^\s*(?:(?:hi|hello|hey|dear)\b[^\n]{0,40},\s*$|(?:from|to|cc|subject|sent|date|re)\s*:|(?:best|kind regards"
    r"|regards|cheers|thanks|thank you|sincerely|br)[,!.]?\s*$|\[?\d{1,2}:\d{2}|[\w .'-]{1,30}:\s|-{3,}|={3,}"
    r"|(?:发件人|收件人|主题|抄送)[:：]|各位|您好|此致|敬礼)",
    re.IGNORECASE | re.MULTILINE,
)
_LONG_BLOCK = 300  # characters: a multi-line message this long with mail or chat markers is pasted


def own_words(text: str) -> str:
    """The message without what the user quotes or pastes: "> " lines, quoted spans, what
    follows a colon that introduces someone else's text, and the body of a multi-line
    pasted block (an e-mail, a chat log) after its first line."""
    lines = [line for line in text.splitlines() if not _QUOTED_LINE.match(line)]
    kept = "\n".join(lines)
    introduced = _INTRODUCER.search(kept)
    if introduced is not None:
        kept = kept[: introduced.end()]
    kept = _QUOTED_SPAN.sub(" … ", kept)
    nonempty = [line for line in kept.splitlines() if line.strip()]
    if len(nonempty) >= 3 and _looks_pasted("\n".join(nonempty[1:])):
        kept = nonempty[0]
    return kept


def _looks_pasted(body: str) -> bool:
    return len(body) >= _LONG_BLOCK or len(_BLOCK_MARKERS.findall(body)) >= 2
