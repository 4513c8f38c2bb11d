"""Diary and thoughts: what the companion wrote in its diary and concluded while reflecting, newest first."""
from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from bot.texts import TEXTS, t
from bot.web_page.dates import shown_stored_day
from bot.web_page.paging import paging
from bot.web_page.render import Viewer, bad_input, render
from bot.web_page.site import Page


async def show(request: Request, viewer: Viewer) -> Response:
    """GET /diary: one page of diary entries; /diary?show=thoughts: one page of thoughts."""
    asked = paging(request, size=10)
    kind = request.query_params.get("show", "diary")
    if asked is None or kind not in ("diary", "thoughts"):
        return bad_input(viewer, request.url.query)
    texts = viewer.call.store.diary if kind == "diary" else viewer.call.store.thoughts
    items = await texts.latest(viewer.scope, asked.size + 1, asked.offset)  # one more: is there a next page?
    return render(viewer, "diary.html", kind=kind, items=items[:asked.size], page=asked.number,
                  more=len(items) > asked.size, origin=lambda stored: origin_name(stored, viewer.lang),
                  stored_day=lambda day: shown_stored_day(day, viewer.lang))


def origin_name(origin: str, lang: str) -> str:
    """Where a thought came from, as a person reads it ('reflection' -> 'beim Nachdenken'); '' for none known."""
    key = f"page_origin_{origin}"
    return t(lang, key) if origin and key in TEXTS else ""


PAGES = [Page("/diary", show)]
MENU = ("/diary", "page_diary")
