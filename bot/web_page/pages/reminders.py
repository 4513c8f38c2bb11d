"""Reminders: the active ones with their next time and repeat; edit the text and time, or delete one.

Times are read and written in the person's zone (their own setting, else the deployment's), the zone the reminder
fires in; a changed time reaches the scheduler through the store (`Reminders.on_change` moves the job).
"""
from __future__ import annotations

import datetime as dt

from starlette.requests import Request
from starlette.responses import Response

from bot.commands.time_zones import zone_label
from bot.conversation.reminder_requests import due_words, user_zone
from bot.web_page.dates import read_moment, shown_moment
from bot.web_page.render import Viewer, back_to, bad_input, numbered, render
from bot.web_page.site import Page

TEXT_CHARS = 500


def parse_due(value: str, zone: dt.tzinfo, today: dt.date) -> dt.datetime | None:
    """A typed time ('24.12.2026 9:30', '24.12. 09:30', '2026-12-24T09:30') in `zone`, or None when it is none."""
    try:
        return read_moment(value, zone, today)
    except ValueError:
        return None


def _when(due: dt.datetime, repeat: str, lang: str) -> str:
    """When a reminder comes next: a one-off by the page's day and time, a repeating one as the chat says it."""
    return due_words(due, repeat, lang) if repeat else shown_moment(due.timestamp(), due.tzinfo or dt.UTC, lang)


async def show(request: Request, viewer: Viewer) -> Response:
    """GET /reminders: the active reminders, soonest first, each with its edit form."""
    store, scope = viewer.call.store, viewer.scope
    zone = await user_zone(store, scope, viewer.zone)
    active = await store.reminders.active(scope)
    numbers = await store.numbers.of_many(scope, "reminder", [r.id for r in active])
    rows = [{"r": r, "number": numbers[r.id], "when": _when(r.due_at.astimezone(zone), r.repeat, viewer.lang),
             "value": shown_moment(r.due_at.timestamp(), zone, viewer.lang)} for r in active]
    return render(viewer, "reminders.html", done=request.query_params.get("done"), rows=rows,
                  zone=zone_label(zone.key, viewer.lang, viewer.call.engine.clock()))


async def edit(request: Request, viewer: Viewer) -> Response:
    """POST /reminders/<number>/edit: a new text and next time (in the future); nothing changes on bad input."""
    store, scope, call = viewer.call.store, viewer.scope, viewer.call
    reminder = await store.reminders.get(scope, await numbered(request, viewer, "reminder"))
    form = await request.form()
    text = " ".join(str(form.get("text") or "").split())[:TEXT_CHARS]
    due = parse_due(str(form.get("due") or ""), await user_zone(store, scope, viewer.zone), viewer.today())
    if not text:
        return bad_input(viewer, viewer.t("page_reminder_text_missing"))
    now = call.engine.clock()
    if due is None or due.timestamp() <= now:
        return bad_input(viewer, viewer.t("page_reminder_time_wrong"))
    await store.reminders.edit(scope, reminder.id, text, due.timestamp(), now=now, reason="web page")
    return back_to(viewer, "/reminders", "page_reminder_changed")


async def delete(request: Request, viewer: Viewer) -> Response:
    """POST /reminders/<number>/delete: cancel it, as the chat's delete button does."""
    await viewer.call.store.reminders.cancel(viewer.scope, await numbered(request, viewer, "reminder"))
    return back_to(viewer, "/reminders", "page_reminder_deleted")


PAGES = [Page("/reminders", show), Page("/reminders/{number:int}/edit", edit, ("POST",)),
         Page("/reminders/{number:int}/delete", delete, ("POST",))]
MENU = ("/reminders", "page_reminders")
