"""Profile: the facts about the person that always go into the prompt, each with a delete button.

Deleting is `Profile.delete` as a correction does it: the entry with its index entries in one transaction, audited
as its own processing, so the change log shows it and /undo brings it back.
"""
from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from bot.profile_keys import profile_category, profile_key
from bot.web_page.render import Viewer, back_to, numbered, render
from bot.web_page.site import Page


async def show(request: Request, viewer: Viewer) -> Response:
    """GET /profile: the entries, most important first, by their keys in the viewer's language."""
    store, scope = viewer.call.store, viewer.scope
    entries = await store.profile.list(scope)
    numbers = await store.numbers.of_many(scope, "profile_entry", [e.id for e in entries])
    return render(viewer, "profile.html", done=request.query_params.get("done"), entries=entries, numbers=numbers,
                  key_name=lambda key: profile_key(key, viewer.lang),
                  category_name=lambda category: profile_category(category, viewer.lang))


async def delete(request: Request, viewer: Viewer) -> Response:
    """POST /profile/{number}/delete: the entry goes (another scope's number: 404)."""
    await viewer.call.store.profile.delete(viewer.scope, await numbered(request, viewer, "profile_entry"),
                                           reason="web page")
    return back_to(viewer, "/profile", "page_profile_deleted")


PAGES = [Page("/profile", show), Page("/profile/{number:int}/delete", delete, ("POST",))]
MENU = ("/profile", "page_profile")
