"""The change log: every processing (an extraction, a correction, a command) with what it changed, before → after,
and an undo button for each that can still be taken back, undone exactly as the chat's saved notice undoes one."""
from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from bot.commands.memories import change_line, numbers_of
from bot.web_page.paging import paging
from bot.web_page.render import Viewer, back_to, bad_input, render
from bot.web_page.site import Page
from memory import NotFound, processing_changes, recent_processings, undo_processing

# What undoing said, as the text shown on top of the change log afterwards.
UNDONE = {"done": "page_undone", "later": "page_undo_later", "undone": "page_undo_nothing",
          "final": "page_undo_final", "missing": "page_undo_nothing", "fired": "page_undo_fired"}


async def show(request: Request, viewer: Viewer) -> Response:
    """GET /changes: one page of processings, newest first."""
    asked = paging(request)
    if asked is None:
        return bad_input(viewer, request.query_params.get("page", ""))
    call = viewer.call
    found = await recent_processings(call.store.db, viewer.scope.id, asked.size + 1, asked.offset)
    shown = found[:asked.size]
    numbers = await numbers_of(call, [e for p in shown for e in p.entries])
    listed = [(p, [change_line(e, numbers.get((e.item_type, e.item_id or 0)), viewer.lang, viewer.zone).lstrip("• ")
                   for e in p.entries]) for p in shown]
    return render(viewer, "changes.html", done=request.query_params.get("done"), processings=listed,
                  page=asked.number, more=len(found) > asked.size, query="")


async def undo(request: Request, viewer: Viewer) -> Response:
    """POST /changes/undo (processing=ID): take back that processing, if it still can be; another scope's → 404."""
    processing = str((await request.form()).get("processing") or "")
    if not processing:
        return bad_input(viewer, "processing")
    call = viewer.call
    found = await processing_changes(call.store.db, viewer.scope.id, processing)
    if found is None:
        raise NotFound(processing)
    if found.state != "open":  # undone already, forgotten for good, or itself an undo: nothing changes
        return back_to(viewer, "/changes", UNDONE["final"] if found.state == "final" else "page_undo_nothing")
    async with call.engine.learning_paused(viewer.scope):  # no extraction in flight builds on it meanwhile
        undone = await undo_processing(call.store, viewer.scope, processing)
    return back_to(viewer, "/changes", UNDONE[undone.status])


PAGES = [Page("/changes", show), Page("/changes/undo", undo, ("POST",))]
MENU = ("/changes", "page_changes")
