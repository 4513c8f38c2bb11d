"""The web page in tests: the real app (routes, session checks, security headers) over HTTP through httpx's ASGI
transport, on the real engine and SQLite; logging in goes through /web in the chat, as a person does it."""
from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import httpx

from bot.commands.runner import Commands
from bot.commands.web_links import WebLinks
from bot.conversation.engine import Engine
from bot.web_page.health import Running
from bot.web_page.prometheus import PrometheusMetrics
from bot.web_page.routes import web_app
from bot.web_page.site import Site
from memory.ledgers.shown_numbers import Kind
from memory.models import Scope

BASE = "http://127.0.0.1:8377"
LINK = re.compile(r"http://127\.0\.0\.1:8377(/web/login\?t=[\w-]+)")
CSRF = re.compile(r'name="csrf" value="([\w-]+)"')


def link_in(text: str) -> str:
    """The path of the login link in a chat answer (fails the test when there is none)."""
    found = LINK.search(text)
    assert found, f"no login link in {text!r}"
    return found.group(1)


@dataclass
class Browser:
    """One browser: its own cookies, logged in as one person or not at all."""

    http: httpx.AsyncClient
    csrf: str = ""

    async def log_in(self, commands: Commands, user_id: str) -> None:
        """Ask for /web in the chat, open the link, press the button: logged in."""
        reply = await commands.run(user_id, "/web")
        assert reply is not None
        path = link_in(reply.bubbles[0])
        shown = await self.http.get(path)
        assert shown.status_code == 200
        token = path.split("t=", 1)[1]
        done = await self.http.post("/web/login", data={"t": token})
        assert done.status_code == 303 and done.headers["location"] == "/web/"
        await self.page("/web/")

    async def page(self, path: str) -> httpx.Response:
        """GET a page; the form token of the page is kept for the next post."""
        response = await self.http.get(path)
        if (found := CSRF.search(response.text)) is not None:
            self.csrf = found.group(1)
        return response

    async def post(self, path: str, data: dict[str, str] | None = None, *, token: bool = True) -> httpx.Response:
        """POST a form, with the session's form token unless `token` is False."""
        fields = dict(data or {})
        if token:
            fields.setdefault("csrf", self.csrf)
        return await self.http.post(path, data=fields)


@dataclass
class WebPage:
    """The app on the engine, the commands the chat uses, and browsers to look at it with."""

    engine: Engine
    commands: Commands
    site: Site
    app: object
    browsers: list[Browser] = field(default_factory=list)

    def browser(self) -> Browser:
        """A fresh browser (no cookies)."""
        client = httpx.AsyncClient(transport=httpx.ASGITransport(app=self.app), base_url=BASE)  # type: ignore[arg-type]
        browser = Browser(client)
        self.browsers.append(browser)
        return browser

    async def signed_in(self, user_id: str) -> Browser:
        """A browser logged in as `user_id` (who has written once, so their memory exists)."""
        browser = self.browser()
        await browser.log_in(self.commands, user_id)
        return browser

    async def number(self, scope: Scope, kind: Kind, item_id: int) -> int:
        """The number the page's URLs carry for one of the scope's items (the chat's number, never the id)."""
        return await self.engine.store.numbers.of(scope, kind, item_id)


async def web_page(engine: Engine, admins: frozenset[str] = frozenset(),
                   clock: Callable[[], float] = time.time) -> AsyncIterator[WebPage]:
    """The web page on `engine` (for a fixture): yields it, closes its browsers after."""
    commands = Commands(engine)
    commands.web = WebLinks(engine.store, BASE, clock)
    site = Site(commands, admins, clock=clock)
    app = web_app(site, Running(engine.store), PrometheusMetrics(), None)
    page = WebPage(engine, commands, site, app)
    try:
        yield page
    finally:
        for browser in page.browsers:
            await browser.http.aclose()
