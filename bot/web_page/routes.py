"""Every route of the private web page: its static files, logging in and out, and the sections."""
from __future__ import annotations

from starlette.routing import BaseRoute, Mount
from starlette.staticfiles import StaticFiles

from bot.web_page.login import language_page, login_routes
from bot.web_page.pages import overview
from bot.web_page.site import Page, Site, mounted

SECTIONS: list[list[Page]] = [overview.PAGES]  # each section's pages; its menu entry is in render.NAV


def page_routes(site: Site) -> list[BaseRoute]:
    """The routes to pass to `make_app` as its pages."""
    pages = [language_page(site)] + [page for section in SECTIONS for page in section]
    static = Mount("/web/static", app=StaticFiles(packages=[("bot.web_page", "static")]), name="static")
    return [static, *login_routes(site), *mounted(site, pages)]
