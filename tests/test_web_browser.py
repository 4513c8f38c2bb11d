"""The web page in a real headless Chromium: log in through the link the bot sends over the (fake) Bot API, then
use the page as a person does. Screenshots of the main pages are kept as artefacts (build/screenshots/)."""
from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest

from bot.channels.telegram.channel import TelegramChannel, TelegramConfig
from bot.commands.runner import Commands
from bot.conversation.engine import Engine
from bot.web_page.app import make_app
from bot.web_page.headers import SecurityHeaders
from bot.web_page.health import Running
from bot.web_page.links import WebLinks
from bot.web_page.metrics import PrometheusMetrics
from bot.web_page.routes import page_routes
from bot.web_page.server import WebServer
from bot.web_page.site import Site
from tests.browser_kit import need_chromium, phone_page, screenshots
from tests.fakes.telegram_api import FakeTelegram
from tests.test_telegram import USER, exchange

LINK = re.compile(r"(http://127\.0\.0\.1:\d+/web/login\?t=[\w-]+)")


@dataclass
class Served:
    """The bot on Telegram (fake Bot API) with its web page served on a free port."""

    tg: FakeTelegram
    engine: Engine
    channel: TelegramChannel
    server: WebServer

    async def link(self) -> str:
        """Ask the bot for /web as Anna and return the link from its answer."""
        answer = await exchange(self.tg, "/web")
        found = LINK.search(answer[0]["text"])
        assert found, answer
        return found.group(1)


@pytest.fixture
async def bot(tg: FakeTelegram, engine: Engine) -> AsyncIterator[Served]:
    commands = Commands(engine)
    site = Site(commands)
    server = WebServer(SecurityHeaders(make_app(Running(engine.store), PrometheusMetrics(), None, page_routes(site)),
                                       False), "127.0.0.1", 0)
    await server.start()
    commands.web = WebLinks(engine.store, f"http://127.0.0.1:{server.port}")
    channel = TelegramChannel(engine, commands, TelegramConfig(token=tg.token, base_url=tg.base_url,
                                                               allowed_users=frozenset({str(USER)}), streaming=False))
    await channel.start()
    try:
        yield Served(tg, engine, channel, server)
    finally:
        await channel.stop()
        await server.stop()


@pytest.fixture
async def page() -> AsyncIterator[Any]:
    async for p in phone_page(need_chromium()):
        yield p


async def log_in(bot: Served, page: Any) -> None:
    """Open the link from the chat and press the login button."""
    await page.goto(await bot.link())
    await page.get_by_role("button", name="Anmelden").click()
    await page.wait_for_url("**/web/")


async def test_log_in_through_the_chats_link_and_switch_language(bot: Served, page: Any) -> None:
    await exchange(bot.tg, "Hallo! Ich heiße Anna und wohne in Leipzig.")
    await log_in(bot, page)
    assert await page.locator("h1").inner_text() == "Überblick"
    await page.screenshot(path=str(screenshots() / "overview.png"), full_page=True)
    await page.get_by_role("button", name="English").click()
    await page.wait_for_load_state()
    assert await page.locator("h1").inner_text() == "Overview"
    await page.get_by_role("button", name="Deutsch").click()
    await page.wait_for_load_state()
    assert await page.locator("h1").inner_text() == "Überblick"


async def test_a_used_link_shows_a_clear_page_in_the_browser(bot: Served, page: Any) -> None:
    await exchange(bot.tg, "Hallo!")
    link = await bot.link()
    await page.goto(link)
    await page.get_by_role("button", name="Anmelden").click()
    await page.wait_for_url("**/web/")
    await page.goto(link)
    await page.get_by_role("button", name="Anmelden").click()
    assert "schon benutzt" in await page.locator("main").inner_text()
