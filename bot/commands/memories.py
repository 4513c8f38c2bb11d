"""What mnemo remembers about the user: /memories, /forget, /why and /undo, and the mem, forget, why and saved
buttons."""
from __future__ import annotations

from dataclasses import replace
from datetime import tzinfo

from bot.commands.invocation import Call, Pressed
from bot.commands.relationship_view import describe_change
from bot.conversation.saved_notices import items_of, listed, processing_of
from bot.conversation.why import explain
from bot.exchange import Button, Reply, item_id
from bot.history.approval import provenances
from bot.learning import forgetting
from bot.quoting import clip
from bot.texts import TEXTS, t
from memory import (
    AuditEntry,
    Note,
    NotFound,
    NumberedKind,
    ReminderFired,
    SearchHit,
    is_final,
    latest_processing,
    new_processing,
    undo_latest,
    undo_processing,
)

PAGE = 10

# Audit item types whose items carry the user's own numbers (#3), and the kind of number.
NUMBERED: dict[str, NumberedKind] = {"note": "note", "rule": "rule", "reminder": "reminder", "person": "person"}


async def keyword_search(call: Call, words: str, k: int) -> list[SearchHit]:
    """Notes about what the person typed: those holding every word (inflected, or inside a compound), or, for one
    word, very close in meaning (`memory.search.keywords`); nothing when none is."""
    strict = call.store.calibration.keyword
    return await call.store.keyword_search(call.scope, words, k, strict=strict)


async def notes_about(call: Call, words: str, k: int) -> list[SearchHit]:
    """What the person searches for (/memories WORDS, the memory page): the keyword search's notes first, then those
    about it by meaning (`MemoryStore.find_notes`). Deletion lists keep to `keyword_search`."""
    strict = call.store.calibration.keyword
    return await call.store.find_notes(call.scope, words, k, strict=strict)


def line(number: int, text: str, origin: str | None) -> str:
    """'#3 Anna mag Jazz (aus ChatGPT, 2023-03-02)': a note as a list shows it, with where an imported one came from."""
    return f"#{number} {clip(text, 200)}" + (f" ({origin})" if origin else "")


async def memories(call: Call, args: str) -> Reply:
    """/memories: a page of notes; /memories WORDS: the notes naming them, then those about them by meaning."""
    if not args:
        return await page(call, 0)
    hits = await notes_about(call, args, PAGE)
    if not hits:
        return Reply((call.t("memories_none_found"),))
    numbers = await call.store.numbers.of_many(call.scope, "note", [h.item_id for h in hits])
    origins = await provenances(call.store, call.scope, [h.item_id for h in hits], call.lang)
    lines = [call.t("memories_found")] + [line(numbers[h.item_id], h.text, origins.get(h.item_id)) for h in hits]
    return Reply(("\n".join(lines),))


async def page(call: Call, offset: int) -> Reply:
    """One page of notes, newest first, with paging buttons."""
    store, scope = call.store, call.scope
    total = await store.notes.count(scope)
    if total == 0:
        return Reply((call.t("memories_empty"),))
    offset = max(0, min(offset, (total - 1) // PAGE * PAGE))
    notes = await store.notes.list(scope, limit=PAGE, offset=offset)
    numbers = await store.numbers.of_many(scope, "note", [n.id for n in notes])
    origins = await provenances(store, scope, [n.id for n in notes], call.lang)
    head = call.t("memories_head", first=offset + 1, last=offset + len(notes), total=total)
    lines = [head] + [line(numbers[n.id], n.text, origins.get(n.id)) for n in notes]
    row = []
    if offset > 0:
        row.append(Button(call.t("back"), f"mem:{offset - PAGE}"))
    if offset + PAGE < total:
        row.append(Button(call.t("next"), f"mem:{offset + PAGE}"))
    return Reply(("\n".join(lines),), buttons=(tuple(row),) if row else ())


async def turn_page(call: Call, fields: list[str]) -> Pressed | None:
    """'mem:<offset>': show that page in the message."""
    if len(fields) != 1 or not fields[0].lstrip("-").isdigit():
        return None
    shown = await page(call, int(fields[0]))
    return Pressed("", shown.bubbles[0], shown.buttons)


async def forget(call: Call, args: str) -> Reply:
    """/forget 3 or /forget WORDS: the note(s) to forget, each behind a button (nothing goes without a press)."""
    if not args:
        return Reply((call.t("forget_usage"),))
    store, scope = call.store, call.scope
    cancel = Button(call.t("cancel"), "cancel")
    if (number := item_id(args)) is not None:
        try:
            note = await store.notes.get(scope, await store.numbers.item(scope, "note", number))
        except NotFound:
            return Reply((call.t("memories_none_found"),))
        return Reply((f"{call.t('forget_confirm')}\n#{number} {note.text}",),
                     buttons=((Button(call.t("forget"), f"forget:{number}"), cancel),))
    hits = await keyword_search(call, args, 3)
    if not hits:
        return Reply((call.t("memories_none_found"),))
    numbers = await store.numbers.of_many(scope, "note", [h.item_id for h in hits])
    lines = [call.t("forget_pick")] + [f"#{numbers[h.item_id]} {clip(h.text, 200)}" for h in hits]
    rows = tuple((Button(f"{call.t('forget')} #{numbers[h.item_id]}", f"forget:{numbers[h.item_id]}"),)
                 for h in hits)
    return Reply(("\n".join(lines),), buttons=rows + ((cancel,),))


async def press_forget(call: Call, fields: list[str]) -> Pressed | None:
    """'forget:<number>': delete the note for good, then rewrite what was written from it."""
    if len(fields) != 1 or not fields[0].isdigit():
        return None
    note_id = await call.store.numbers.item(call.scope, "note", int(fields[0]))
    note, copies = await forget_note(call, note_id)
    done = forgetting.with_copies(call.t("forget_done", text=clip(note.text, 200)), copies, call.lang)
    return Pressed(done, done)


async def forget_note(call: Call, note_id: int, reason: str = "/forget") -> tuple[Note, forgetting.Rewritten]:
    """Delete a note for good, then rewrite what was written from it (the chat's forget button and the web page)."""
    async with call.engine.learning_paused(call.scope):
        processing = new_processing("forget")
        note = await call.store.notes.erase(call.scope, note_id, reason=reason)
        copies = await forgetting.forget(call.store, call.engine.background, call.scope,
                                         forgetting.Forgotten((note.text,)), processing=processing, reason=reason,
                                         final=True)
    return note, copies


async def why(call: Call, args: str) -> Reply:
    """/why 3, /why WORDS or /why (the notes of the last answer): where mnemo knows it from."""
    if (number := item_id(args)) is not None:
        try:
            ids = [await call.store.numbers.item(call.scope, "note", number)]
        except NotFound:
            ids = []
    elif args:
        ids = [h.item_id for h in await keyword_search(call, args, 3)]
    else:
        ids = await call.engine.last_notes(call.scope)
    return await explain(call.store, call.scope, ids, call.lang, await call.engine.zone_for(call.scope))


async def press_why(call: Call, fields: list[str]) -> Pressed | None:
    """'why:wrong|old:<number>': close a note the person called wrong or outdated; a wrong one leaves its copies too."""
    if len(fields) != 2 or fields[0] not in ("wrong", "old") or not fields[1].isdigit():
        return None
    note_id = await call.store.numbers.item(call.scope, "note", int(fields[1]))
    closed = await close_note(call, note_id, wrong=fields[0] == "wrong", reason="why")
    if closed is None:
        return Pressed(call.t("button_stale"), stale=True)
    note, copies = closed
    done = call.t("why_closed", text=clip(note.text, 200))
    if copies is not None:
        done = forgetting.with_copies(done, copies, call.lang)
    return Pressed(done, done)


async def close_note(call: Call, note_id: int, *, wrong: bool, reason: str
                     ) -> tuple[Note, forgetting.Rewritten | None] | None:
    """Close a note the person called wrong (never true: its copies lose it too) or outdated (true until now: its
    copies keep it as history); one undoable processing. None when it was closed already.
    """
    store, scope = call.store, call.scope
    if (await store.notes.get(scope, note_id)).valid_to is not None:
        return None
    processing = new_processing("why")
    why = f"{reason}: wrong" if wrong else f"{reason}: outdated"
    note = await store.notes.close(scope, note_id, processing=processing, reason=why)
    if not wrong:
        return note, None
    copies = await forgetting.forget(store, call.engine.background, scope, forgetting.Forgotten((note.text,)),
                                     processing=processing, reason=why, final=False)  # undoable: not final
    return note, copies


def _item_text(entry: AuditEntry) -> str:
    item = entry.before or entry.after or {}
    return clip(str(item.get("text") or item.get("summary") or item.get("value") or item.get("name")
                    or item.get("status") or ""), 120)


def change_line(entry: AuditEntry, number: int | None, lang: str, zone: tzinfo) -> str:
    """One audited change as the change log shows it: like /undo's line, an edit with its text before → after."""
    if entry.item_type == "relationship":
        return describe_change(lang, entry, zone)
    shown = undo_line(entry, number, lang)
    if entry.action == "update" and entry.before and entry.after:
        after = _item_text(replace(entry, before=None))
        if after and after != _item_text(entry):
            shown += f" → {after}"
    return shown


def undo_line(entry: AuditEntry, number: int | None, lang: str) -> str:
    """One line of /undo in the user's language: '• Notiz #3 gelöscht: Anna mag Tee'."""
    item = f"undo_item_{entry.item_type}" if f"undo_item_{entry.item_type}" in TEXTS else "undo_item_other"
    action = f"undo_action_{entry.action}" if f"undo_action_{entry.action}" in TEXTS else "undo_action_other"
    text = _item_text(entry)
    return t(lang, "undo_line", item=t(lang, item), number=f" #{number}" if number else "",
             action=t(lang, action), text=f": {text}" if text else "")


async def undo(call: Call, args: str) -> Reply:
    """/undo: take back the last change to memory and say what came back."""
    scope = call.scope
    numbers = await numbers_of(call, await latest_processing(call.store, scope))  # what is there now
    try:
        entries = await undo_latest(call.store, scope)
    except ReminderFired as fired:  # it came: taking it back would cancel what was delivered, or make it come again
        return Reply((call.t("undo_reminder_fired", text=clip(", ".join(fired.texts), 120)),))
    if not entries:
        return Reply((call.t("undo_nothing"),))
    restored = [e for e in entries if not is_final(e)]
    if not restored:
        return Reply((call.t("undo_final"),))
    numbers |= await numbers_of(call, restored)  # what is back now (the same number as before)
    lines = [call.t("undo_done")] + [
        describe_change(call.lang, e, await call.engine.zone_for(scope)) if e.item_type == "relationship"
        else undo_line(e, numbers.get((e.item_type, e.item_id or 0)), call.lang) for e in restored]
    return Reply(("\n".join(lines),))


async def numbers_of(call: Call, entries: list[AuditEntry]) -> dict[tuple[str, int], int]:
    """The user's numbers of the numbered items that audit entries name, where the item exists (or did)."""
    found: dict[tuple[str, int], int] = {}
    for item_type, kind in NUMBERED.items():
        ids = [e.item_id for e in entries if e.item_type == item_type and e.item_id is not None]
        found |= {(item_type, i): n for i, n in (await call.store.numbers.of_many(call.scope, kind, ids)).items()}
    return found



async def press_saved(call: Call, fields: list[str]) -> Pressed | None:
    """'saved:undo:extract:<hex>' under a saved notice: take back exactly that extraction, not the newest change.

    Refused, and nothing changes, when it was taken back before (or /deleteme took everything), or when a later
    change builds on one of its items (then /undo, newest first, is the way).
    """
    processing = processing_of(fields)
    if processing is None:
        return None
    async with call.engine.learning_paused(call.scope):  # no extraction in flight builds on it meanwhile
        undone = await undo_processing(call.store, call.scope, processing)
    if undone.status == "later":
        return Pressed(call.t("saved_later"))
    if undone.status != "done":
        return Pressed(call.t("button_stale"), stale=True)
    text = call.t("saved_undone", items=listed(items_of(undone.entries)) or "–")
    return Pressed(call.t("saved_undone_notice"), text)
