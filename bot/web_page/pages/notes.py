"""Notes: the scope's live notes (newest first, or what the chat's search finds), filtered by kind, person and date;
one note with the messages it came from; edit, mark wrong or outdated, forget.

Changes go the chat's ways: an edit is `Notes.edit` (row, vector and full text in one transaction, one audited
processing that /undo takes back); wrong and outdated close the note as the /why buttons do (`close_note`: wrong
also takes it out of the copies, outdated keeps them as history); forget is the /forget button's `forget_note`.
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import replace

from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response

from bot.commands.memories import close_note, forget_note, notes_about
from bot.conversation.turn import check_input
from bot.history.approval import provenances
from bot.texts import TEXTS
from bot.web_page.paging import day_start
from bot.web_page.render import Viewer, back_to, bad_input, numbered, render
from bot.web_page.site import Page
from memory import NOTE_KINDS, Note, NoteFilter

PAGE = 20  # notes per page
FOUND = 100  # at most this many notes found by a search


class BadFilter(ValueError):
    """A filter the page cannot read (its message says which)."""


def read_filter(params: QueryParams, zone: dt.tzinfo, today: dt.date) -> tuple[NoteFilter, int]:
    """The filter and the page number a list's query asks for; BadFilter when one of them is not understood.

    The filter's person is the person's number as the page shows it (not yet the id behind it).
    """
    kind = params.get("kind", "")
    if kind and kind not in NOTE_KINDS:
        raise BadFilter(kind)
    person = params.get("person", "")
    if person and not person.isdigit():
        raise BadFilter(person)
    page = params.get("page", "0")
    if not page.isdigit():
        raise BadFilter(page)
    try:
        since = day_start(params.get("from", ""), zone, today)
        until = day_start(params.get("to", ""), zone, today, days_after=1)  # 'to' includes its day
    except ValueError as exc:
        raise BadFilter(str(exc)) from exc
    return NoteFilter(kind or None, int(person) if person else None, since, until), int(page)


def labeller(viewer: Viewer) -> Callable[[str, str], str]:
    """`label(prefix, value)` for templates: the text `prefix + value` where there is one, else the value."""
    return lambda prefix, value: viewer.t(prefix + value) if prefix + value in TEXTS else value


async def show_list(request: Request, viewer: Viewer) -> Response:
    """GET /notes: a page of live notes, newest first, or the ones the search finds (those naming the words first,
    then those about them by meaning), filtered."""
    store, scope, params = viewer.call.store, viewer.scope, request.query_params
    try:
        which, page = read_filter(params, viewer.zone, viewer.today())
    except BadFilter as exc:
        return bad_input(viewer, str(exc))
    if which.person_id is not None:  # the person's number; another scope's or a forgotten person: 404
        person = await store.people.get(scope, await store.numbers.item(scope, "person", which.person_id))
        which = replace(which, person_id=person.id)
    words = params.get("q", "").strip()
    notes: Sequence[Note]
    if words:
        hits = [h.item_id for h in await notes_about(viewer.call, words, FOUND)]
        found = await store.notes.find(scope, NoteFilter(which.kind, which.person_id, which.since, which.until,
                                                         tuple(hits)), limit=FOUND)
        rank = {item_id: i for i, item_id in enumerate(hits)}
        ranked = sorted(found, key=lambda n: rank[n.id])
        total, notes = len(ranked), ranked[page * PAGE:(page + 1) * PAGE]
    else:
        total = await store.notes.count_found(scope, which)
        notes = await store.notes.find(scope, which, limit=PAGE, offset=page * PAGE)
    paging = {key: value for key, value in params.items() if key not in ("page", "done")}
    people = await store.people.all(scope)
    numbers = await store.numbers.of_many(scope, "person", [p.id for p in people])
    return render(viewer, "notes.html", done=params.get("done"), notes=await _shown(viewer, notes), total=total,
                  page=page, pages=max(1, -(-total // PAGE)), paging=paging, kinds=NOTE_KINDS,
                  people=[(numbers[p.id], p.name) for p in people], chosen=params, label=labeller(viewer))


async def show_note(request: Request, viewer: Viewer) -> Response:
    """GET /notes/{number}: one note, where it came from and the messages it was learned from."""
    store, scope = viewer.call.store, viewer.scope
    note = await store.notes.get(scope, await numbered(request, viewer, "note"))
    messages = [m for m in [await store.messages.get(scope, i) for i in note.source_message_ids] if m is not None]
    shown = (await _shown(viewer, [note]))[0]
    return render(viewer, "note.html", done=request.query_params.get("done"), item=shown, messages=messages,
                  limit=viewer.call.engine.config.max_message_chars, label=labeller(viewer))


async def _shown(viewer: Viewer, notes: Sequence[Note]) -> list[dict[str, object]]:
    """The notes as the page shows them: with the chat's number, the person they are about, where they came from."""
    store, scope, ids = viewer.call.store, viewer.scope, [n.id for n in notes]
    numbers = await store.numbers.of_many(scope, "note", ids)
    origins = await provenances(store, scope, ids, viewer.lang)
    about = await store.people.persons_of_notes(scope, ids)
    names = {p.id: p.name for p in await store.people.all(scope, include_closed=True)} if about else {}
    return [{"note": n, "number": numbers.get(n.id), "origin": origins.get(n.id),
             "person": names.get(about.get(n.id, 0) or 0)} for n in notes]


async def edit(request: Request, viewer: Viewer) -> Response:
    """POST /notes/{number}/edit: a new text (re-embedded, re-indexed, audited; /undo takes it back)."""
    number = request.path_params["number"]
    note = await _live(viewer, await numbered(request, viewer, "note"))
    if note is None:
        return back_to(viewer, f"/notes/{number}", "page_note_closed")
    text = str((await request.form()).get("text") or "")
    unfit = check_input(text, viewer.call.engine.config.max_message_chars)
    if unfit is not None:
        return bad_input(viewer, viewer.t(f"page_note_text_{unfit}"))
    await viewer.call.store.notes.edit(viewer.scope, note.id, text, reason="web page")
    return back_to(viewer, f"/notes/{number}", "page_note_edited")


async def mark_wrong(request: Request, viewer: Viewer) -> Response:
    """POST /notes/{number}/wrong: it was never true (closed; its copies lose it too)."""
    return await _close(request, viewer, wrong=True)


async def mark_outdated(request: Request, viewer: Viewer) -> Response:
    """POST /notes/{number}/outdated: it was true until now (closed; kept as history)."""
    return await _close(request, viewer, wrong=False)


async def _close(request: Request, viewer: Viewer, *, wrong: bool) -> Response:
    closed = await close_note(viewer.call, await numbered(request, viewer, "note"), wrong=wrong, reason="web page")
    if closed is None:
        return back_to(viewer, f"/notes/{request.path_params['number']}", "page_note_closed")
    return back_to(viewer, "/notes", "page_note_marked_wrong" if wrong else "page_note_marked_outdated")


async def forget(request: Request, viewer: Viewer) -> Response:
    """POST /notes/{number}/forget: gone for good, and rewritten out of its copies (as /forget does it)."""
    await forget_note(viewer.call, await numbered(request, viewer, "note"), reason="web page")
    return back_to(viewer, "/notes", "page_note_forgotten")


async def _live(viewer: Viewer, note_id: int) -> Note | None:
    """The scope's note (NotFound: 404), or None when it is closed already."""
    note = await viewer.call.store.notes.get(viewer.scope, note_id)
    return note if note.valid_to is None else None


PAGES = [
    Page("/notes", show_list),
    Page("/notes/{number:int}", show_note),  # the person's own note number, as the chat shows it
    Page("/notes/{number:int}/edit", edit, ("POST",)),
    Page("/notes/{number:int}/wrong", mark_wrong, ("POST",)),
    Page("/notes/{number:int}/outdated", mark_outdated, ("POST",)),
    Page("/notes/{number:int}/forget", forget, ("POST",)),
]
MENU = ("/notes", "page_notes")
