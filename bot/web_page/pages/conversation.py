"""The conversation log: the messages newest first, with a word search and a time filter; incognito stretches show
only that they happened."""
from __future__ import annotations

from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response

from bot.conversation.why import said
from bot.web_page.paging import day_start, paging
from bot.web_page.render import Viewer, bad_input, render, when
from bot.web_page.site import Page
from memory import is_group_scope


async def show(request: Request, viewer: Viewer) -> Response:
    """GET /log?q=WORDS&from=DAY&to=DAY&page=N: the messages found, newest first (both days included)."""
    asked = paging(request)
    query = request.query_params
    words, first, last = query.get("q", "").strip(), query.get("from", ""), query.get("to", "")
    try:
        start = day_start(first, viewer.zone, viewer.today())
        end = day_start(last, viewer.zone, viewer.today(), days_after=1)
    except ValueError:
        return bad_input(viewer, f"{first} {last}".strip())
    if asked is None:
        return bad_input(viewer, query.get("page", ""))
    store = viewer.call.store
    found = await store.messages.listing(viewer.scope, words.split(), start, end, asked.size + 1, asked.offset)
    stretches = [] if words or asked.number > 1 else await store.incognito.stretches(viewer.scope, 50, start, end)
    messages = [(m, said(viewer.lang, m.origin, when(viewer.lang, viewer.zone, m.created_at.timestamp()))
                 if m.role == "user" and m.origin != "text" else "") for m in found[:asked.size]]
    kept = urlencode({k: v for k, v in (("q", words), ("from", first), ("to", last)) if v})
    return render(viewer, "log.html", messages=messages, stretches=stretches, words=words, first=first,
                  last=last, page=asked.number, more=len(found) > asked.size, query=f"{kept}&" if kept else "",
                  group=is_group_scope(viewer.scope.user_id))  # a group's messages are its members', not "Du"


PAGES = [Page("/log", show)]
MENU = ("/log", "page_log")
