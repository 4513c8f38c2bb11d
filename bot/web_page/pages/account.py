"""Export and delete everything: the chat's /export as a download, and /deleteme behind a typed confirmation."""
from __future__ import annotations

from dataclasses import replace

from starlette.requests import Request
from starlette.responses import Response

from bot.commands.account import delete_everything, export_file
from bot.web_page.render import Viewer, back_to, bad_input, problem_page, render
from bot.web_page.site import PLAIN_COOKIE, SECURE_COOKIE, Page

CONFIRM_WORDS = ("LÖSCHEN", "DELETE")  # what the person types to delete everything (either language's word)


async def show(request: Request, viewer: Viewer) -> Response:
    """GET /account: the export link and the way to delete everything."""
    return render(viewer, "account.html", done=request.query_params.get("done"))


async def download(request: Request, viewer: Viewer) -> Response:
    """GET /account/export: exactly the chat's /export file, as a download."""
    document = await export_file(viewer.call)
    return Response(document.content, media_type="application/json",
                    headers={"content-disposition": f'attachment; filename="{document.filename}"'})


async def confirm(request: Request, viewer: Viewer) -> Response:
    """GET /account/delete: the second step, where the person types the confirmation word."""
    return render(viewer, "account_delete.html", word=viewer.t("page_delete_word"))


async def delete(request: Request, viewer: Viewer) -> Response:
    """POST /account/delete (word=LÖSCHEN): delete everything as /deleteme does; the wrong word changes nothing."""
    word = str((await request.form()).get("word") or "").strip().upper()
    if word not in CONFIRM_WORDS:
        return bad_input(viewer, word or "–")
    await delete_everything(viewer.call)
    if viewer.scope.id != viewer.session.scope.id:  # an admin deleted a group's memory: their session stays
        return back_to(replace(viewer, base="/web"), "/", "page_group_deleted")
    gone = problem_page(viewer.lang, "page_deleted", 200, back=None)
    gone.delete_cookie(PLAIN_COOKIE, path="/", httponly=True, samesite="strict")
    gone.delete_cookie(SECURE_COOKIE, path="/", secure=True, httponly=True, samesite="strict")
    return gone


PAGES = [Page("/account", show), Page("/account/export", download), Page("/account/delete", confirm),
         Page("/account/delete", delete, ("POST",))]
MENU = ("/account", "page_account")
