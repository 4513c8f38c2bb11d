"""/review and the review buttons: imported candidates a few at a time, grouped by conversation, ✓/✗ each and
"alle ✓" per group; duplicates marked, contradictions side by side. Nothing imported is a memory before a ✓.

The queue's pieces (the shown group, what a candidate is beside the memory, deciding) are shared with the web
page's review section (bot/web_page/pages/review.py), which shows the same queue."""
from __future__ import annotations

from dataclasses import dataclass

from bot.commands.invocation import Call, Pressed
from bot.exchange import Button, Reply
from bot.history.approval import approve, provenance, reject
from bot.history.shown import candidate_text, shown_title
from bot.profile_keys import profile_key
from bot.quoting import clip
from bot.texts import counted, t
from memory import ImportCandidate as Candidate
from memory import MemoryStore, Note, NotFound, Scope

PAGE = 4  # candidates shown at once: with ✓/✗ each and the group's two, ten options (Matrix keycaps 1️⃣…🔟)


@dataclass(frozen=True)
class Beside:
    """What a candidate is beside the memory: the note it repeats, or what it contradicts (the old side)."""

    duplicate: str | None = None
    contradicts: str | None = None


async def _open_note(store: MemoryStore, scope: Scope, note_id: int | None) -> Note | None:
    """The note if it still stands (not closed, not forgotten)."""
    if note_id is None:
        return None
    try:
        note = await store.notes.get(scope, note_id)
    except NotFound:
        return None
    return note if note.valid_to is None else None


async def beside(store: MemoryStore, scope: Scope, c: Candidate, lang: str) -> Beside:
    """A duplicate of a still standing note, or the old side of a contradiction (a note or a profile entry, by its
    key in the person's language)."""
    if c.kind == "profile":
        known = {(e.category, e.key): e.value for e in await store.profile.list(scope)}
        old_value = known.get((c.data["category"], c.data["key"]))
        changed = old_value is not None and old_value != c.data["value"]
        return Beside(contradicts=f"{profile_key(c.data['key'], lang)}: {old_value}" if changed else None)
    if c.kind != "fact":
        return Beside()
    same, old = await _open_note(store, scope, c.duplicate_of), await _open_note(store, scope, c.contradicts)
    return Beside(same.text if same else None, old.text if old else None)


async def marks(store: MemoryStore, scope: Scope, c: Candidate, lang: str) -> list[str]:
    """What a candidate is beside the memory, as lines of the chat."""
    found, lines = await beside(store, scope, c, lang), []
    if found.duplicate is not None:
        lines.append(t(lang, "review_duplicate", text=clip(found.duplicate, 120)))
    if found.contradicts is not None:
        lines.append(t(lang, "review_contradicts", old=clip(found.contradicts, 120),
                       new=clip(candidate_text(c, lang), 120)))
    return lines


def heading(waiting: int, lang: str) -> str:
    """'Aus deinem Verlauf: 3 Vorschläge warten …'."""
    return t(lang, "review_head_one" if waiting == 1 else "review_head", count=waiting)


def group_heading(first: Candidate, lang: str) -> str:
    """The shown group's conversation, in the person's language, and where and when it was said."""
    return t(lang, "review_group", title=clip(shown_title(first.source, first.conversation_title, lang), 80) or "…",
             origin=provenance(first.source, first.said_at, lang))


async def page(store: MemoryStore, scope: Scope, lang: str) -> Reply:
    """The next few pending candidates of one conversation, with their buttons; or that nothing waits."""
    group = await store.imports.next_group(scope, PAGE)
    if not group:
        return Reply((t(lang, "review_empty"),))
    numbers = await store.numbers.of_many(scope, "candidate", [c.id for c in group])
    first = group[0]
    lines = [heading(await store.imports.pending_count(scope), lang), "", group_heading(first, lang)]
    if (total := len(await store.imports.group(scope, first.import_id, first.conversation_key))) > len(group):
        lines.append(t(lang, "review_group_more", shown=len(group), total=counted(lang, total, "suggestions")))
    rows: list[tuple[Button, ...]] = []
    for c in group:
        n = numbers[c.id]
        kind = f"[{t(lang, 'review_kind_' + c.kind)}] " if c.kind != "fact" else ""
        lines.append(f"#{n} {kind}{clip(candidate_text(c, lang), 200)}")
        lines += [f"   {mark}" for mark in await marks(store, scope, c, lang)]
        rows.append((Button(f"✓ #{n}", f"review:yes:{n}"), Button(f"✗ #{n}", f"review:no:{n}")))
    span = f"{numbers[first.id]}:{numbers[group[-1].id]}"
    rows.append((Button(t(lang, "review_all_yes"), f"review:allyes:{span}"),
                 Button(t(lang, "review_all_no"), f"review:allno:{span}")))
    return Reply(("\n".join(lines),), buttons=tuple(rows))


async def review(call: Call, args: str) -> Reply:
    """/review: the next imported candidates to keep or leave out."""
    return await page(call.store, call.scope, call.lang)


async def span(store: MemoryStore, scope: Scope, first: Candidate, last: Candidate) -> list[Candidate]:
    """The pending candidates of the first one's conversation from `first` to `last`: the group as it was shown
    (candidates queued later stay out of an "alle ✓")."""
    return [c for c in await store.imports.group(scope, first.import_id, first.conversation_key)
            if first.id <= c.id <= last.id]


async def decide(store: MemoryStore, scope: Scope, chosen: list[Candidate], keep: bool,
                 now: float) -> list[Candidate]:
    """Approve or reject the chosen candidates at `now`; the ones decided now (not those decided already)."""
    return [c for c in chosen if await (approve if keep else reject)(store, scope, c, now)]


async def numbered_candidate(store: MemoryStore, scope: Scope, number: int) -> Candidate:
    """The candidate behind the person's own number (the chat's buttons, the page's forms); NotFound for anything
    else (another person's, a forged one)."""
    return await store.imports.candidate(scope, await store.numbers.item(scope, "candidate", number))


async def press(call: Call, fields: list[str]) -> Pressed | None:
    """'review:yes|no:<number>' decides one candidate, 'review:allyes|allno:<first>:<last>' the shown group."""
    verbs = {"yes": 2, "no": 2, "allyes": 3, "allno": 3}
    if not fields or verbs.get(fields[0]) != len(fields) or not all(f.isdigit() for f in fields[1:]):
        return None
    store, scope, lang = call.store, call.scope, call.lang
    keep = fields[0] in ("yes", "allyes")
    first = await numbered_candidate(store, scope, int(fields[1]))
    if len(fields) == 2:
        chosen = [first]
    else:
        chosen = await span(store, scope, first, await numbered_candidate(store, scope, int(fields[2])))
    decided = await decide(store, scope, chosen, keep, call.engine.clock())
    if not decided:
        return Pressed(t(lang, "button_stale"), stale=True)
    if len(decided) == 1:
        notice = t(lang, "review_kept" if keep else "review_dropped", text=clip(candidate_text(decided[0], lang), 80))
    else:
        notice = t(lang, "review_kept_many" if keep else "review_dropped_many", count=len(decided))
    following = await page(store, scope, lang)
    if not following.buttons:
        done = f"{notice}\n{t(lang, 'review_done')}"
        return Pressed(notice, done)
    return Pressed(notice, f"{notice}\n\n{following.bubbles[0]}", following.buttons)
