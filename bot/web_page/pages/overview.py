"""The overview: what mnemo knows in numbers."""
from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from bot.web_page.render import Viewer, render
from bot.web_page.site import Page
from memory import overview


async def show(request: Request, viewer: Viewer) -> Response:
    """GET /: the counts of the memory shown."""
    counts = await overview.counts(viewer.call.store.db, viewer.scope)
    return render(viewer, "overview.html", done=request.query_params.get("done"), counts=counts)


PAGES = [Page("/", show)]
MENU = ("/", "page_overview")  # where the section is in the menu: its path, its text
