"""'Why do you think that?': show a belief with the messages it came from, and buttons to correct it."""
from __future__ import annotations

import re
from zoneinfo import ZoneInfo

from bot.exchange import Button, Reply
from bot.history.approval import provenance
from bot.history.shown import shown_text
from bot.quoting import clip
from bot.texts import TEXTS, t
from memory import MemoryStore, NotFound, Scope

_ASKS_WHY = re.compile(
    r"\b(warum|wieso|weshalb)\s+(denkst|glaubst|meinst)\s+du\b|\bwoher\s+(weißt|weisst)\s+du\b"
    r"|\bwie\s+kommst\s+du\s+(darauf|drauf)\b|\bwhy\s+do\s+you\s+(think|believe|say)\b|\bhow\s+do\s+you\s+know\b",
    re.IGNORECASE,
)


def asks_why(text: str) -> bool:
    """True when the user asks where a belief of the companion comes from."""
    return bool(_ASKS_WHY.search(text))


def said(lang: str, origin: str, when: str) -> str:
    """How a message was sent, as /why says it: 'du schriebst am …', 'du sagtest am … (Sprachnachricht)'."""
    key = f"why_source_{origin}" if f"why_source_{origin}" in TEXTS else "why_source"  # typed or spoken
    return t(lang, key, when=when)


async def explain(store: MemoryStore, scope: Scope, note_ids: list[int], lang: str, zone: ZoneInfo) -> Reply:
    """The notes with their source messages and [wrong] [outdated] [forget] buttons."""
    lines: list[str] = []
    rows: list[tuple[Button, ...]] = []
    numbers = await store.numbers.of_many(scope, "note", note_ids[:3])  # the user's own numbers, never the ids
    imported = await store.imports.provenance(scope, note_ids[:3])
    for note_id in note_ids[:3]:
        try:
            note = await store.notes.get(scope, note_id)
        except NotFound:
            continue
        if note.valid_to is not None or note_id not in numbers:
            continue
        number = numbers[note_id]
        sources = [m for m in [await store.messages.get(scope, i) for i in note.source_message_ids] if m]
        lines.append(f"#{number} {note.text}")
        for m in sources[:2]:
            when = m.created_at.astimezone(zone).strftime("%d.%m.%Y %H:%M")
            lines.append(f"   ↳ {said(lang, m.origin, when)}: „{clip(m.text, 200)}“")
        if note_id in imported:  # the person's own words in the history they brought
            origin = imported[note_id]
            quote = clip(shown_text(origin.quote, lang), 200)
            lines.append(f"   ↳ {provenance(origin.source, origin.said_at, lang)}: „{quote}“")
        elif not sources:
            lines.append(f"   ↳ {t(lang, 'why_no_source')}")
        rows.append((Button(t(lang, "why_wrong", id=number), f"why:wrong:{number}"),
                     Button(t(lang, "why_outdated", id=number), f"why:old:{number}"),
                     Button(t(lang, "why_forget", id=number), f"forget:{number}")))
    if not lines:
        return Reply((t(lang, "why_nothing"),))
    return Reply(("\n".join([t(lang, "why_head")] + lines),), buttons=tuple(rows))
