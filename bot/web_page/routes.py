"""Every route of the private web page: its static files, logging in and out, and the sections."""
from __future__ import annotations

from types import ModuleType

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp

from bot.web_page.app import make_app
from bot.web_page.headers import SecurityHeaders
from bot.web_page.health import Running
from bot.web_page.login import language_page, login_routes
from bot.web_page.pages import (
    account,
    changes,
    conversation,
    diary,
    notes,
    overview,
    people,
    profile,
    reminders,
    review,
    rules,
    topics,
)
from bot.web_page.prometheus import PrometheusMetrics
from bot.web_page.site import Page, Site, mounted

# The sections in the menu's order; each module has PAGES (its routes) and MENU (its path and text key).
SECTIONS: list[ModuleType] = [overview, notes, people, profile, rules, reminders, topics, diary, conversation,
                              review, changes, account]


# the page's icon: a rounded square with an "m", drawn inline (no file, nothing fetched from elsewhere)
FAVICON = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" '
           'fill="#2b6cb0"/><text x="16" y="23" font-family="sans-serif" font-size="20" font-weight="bold" '
           'text-anchor="middle" fill="#fff">m</text></svg>')


async def favicon(request: Request) -> Response:
    """The page's icon as SVG (asked for as /web/favicon.svg by the page, and as /favicon.ico by browsers)."""
    return Response(FAVICON, media_type="image/svg+xml", headers={"cache-control": "public, max-age=86400"})


def page_routes(site: Site) -> list[BaseRoute]:
    """The routes to pass to `make_app` as its pages (the site's menu is filled from the sections too)."""
    site.nav = tuple(section.MENU for section in SECTIONS)
    pages: list[Page] = [language_page(site)] + [page for section in SECTIONS for page in section.PAGES]
    static = Mount("/web/static", app=StaticFiles(packages=[("bot.web_page", "static")]), name="static")
    icons = [Route("/web/favicon.svg", favicon, methods=["GET"]), Route("/favicon.ico", favicon, methods=["GET"])]
    return [static, *icons, *login_routes(site), *mounted(site, pages)]


def web_app(site: Site, running: Running, metrics: PrometheusMetrics, token: str | None) -> ASGIApp:
    """The web server's whole app: the operator's endpoints and the page, security headers on every answer."""
    return SecurityHeaders(make_app(running, metrics, token, page_routes(site)), site.secure)
