"""Logging in by a one-time link, logging out, and the page's language.

The link from /web opens a page with one button: the login happens on its POST, not on the GET, so a
messenger's link preview (Telegram fetches links it shows) cannot use the link up.
"""
from __future__ import annotations

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from bot.texts import t
from bot.web_page.render import ENV, Viewer, bad_input, problem_page
from bot.web_page.site import Page, Site, form_token_ok

LINK_PROBLEMS = {"unknown": "page_link_unknown", "used": "page_link_used", "expired": "page_link_expired"}


def login_routes(site: Site) -> list[BaseRoute]:
    """GET /web/login?t=… (a page with the login button), POST /web/login (log in), POST /web/logout."""

    async def show(request: Request) -> Response:
        lang = site.commands.lang
        token = request.query_params.get("t", "")
        if not token:
            return problem_page(lang, "page_link_unknown", 400, back=None)
        body = ENV.get_template("login.html").render(t=lambda k, **kw: t(lang, k, **kw), lang=lang, token=token)
        return HTMLResponse(body)

    async def log_in(request: Request) -> Response:
        lang = site.commands.lang
        token = (await request.form()).get("t")
        if not isinstance(token, str) or not token:
            return problem_page(lang, "page_link_unknown", 400, back=None)
        redeemed = await site.commands.store.web.redeem(token, site.clock(), site.session_days * 86400)
        if isinstance(redeemed, str):
            return problem_page(lang, LINK_PROBLEMS[redeemed], 410 if redeemed != "unknown" else 404, back=None)
        response = RedirectResponse("/web/", status_code=303)
        response.set_cookie(site.cookie, redeemed.token, max_age=int(site.session_days * 86400), path="/",
                            secure=site.secure, httponly=True, samesite="strict")
        return response

    async def log_out(request: Request) -> Response:
        session = await site.session(request)
        if session is not None:
            if not form_token_ok((await request.form()).get("csrf"), session):
                return problem_page(site.lang(session), "page_forbidden", 403)
            await site.commands.store.web.end(session)
        response = problem_page(site.commands.lang, "page_logged_out", 200, back=None)
        response.delete_cookie(site.cookie, path="/", secure=site.secure, httponly=True, samesite="strict")
        return response

    return [Route("/web/login", show, methods=["GET"]), Route("/web/login", log_in, methods=["POST"]),
            Route("/web/logout", log_out, methods=["POST"])]


def language_page(site: Site) -> Page:
    """POST /web/lang: show the pages in the other language, back on the page the switch was pressed on."""

    async def switch(request: Request, viewer: Viewer) -> Response:
        form = await request.form()
        lang, back = form.get("lang"), form.get("back", "/web/")
        if lang not in ("de", "en") or not isinstance(back, str) or not back.startswith("/web") or "//" in back:
            return bad_input(viewer, "lang")
        await site.commands.store.web.set_lang(viewer.session, lang)
        return RedirectResponse(back, status_code=303)

    return Page("/lang", switch, ("POST",))
