"""The web page in a real headless Chromium: log in through the link the bot sends over the (fake) Bot API, then
use the page as a person does. Screenshots of the main pages are kept as artefacts (build/screenshots/)."""
from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest

from bot.channels.telegram.channel import TelegramChannel, TelegramConfig
from bot.commands.runner import Commands
from bot.commands.web_links import WebLinks
from bot.conversation.engine import Engine
from bot.web_page.health import Running
from bot.web_page.prometheus import PrometheusMetrics
from bot.web_page.routes import web_app
from bot.web_page.server import WebServer
from bot.web_page.site import Site
from memory.records.kinship import PersonDraft
from tests.browser_kit import need_chromium, phone_page, screenshots
from tests.fakes.llm import ScriptedLLM
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
    server = WebServer(web_app(site, Running(engine.store), PrometheusMetrics(), None), "127.0.0.1", 0)
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


async def test_search_edit_see_it_in_the_chat_undo_forget_a_person(bot: Served, page: Any, chat: ScriptedLLM) -> None:
    """The issue's walk through the page: search, edit a note and see the chat's next prompt use the new text, undo
    it, forget a person; screenshots of the main pages on the way."""
    chat.enqueue("Schön, dich kennenzulernen!")
    await exchange(bot.tg, "Hallo! Ich trinke morgens immer Kaffee. Meine Schwester Miriam wohnt in Hamburg.")
    store = bot.engine.store
    scope = await bot.engine.scope_for(f"tg:{USER}")
    [said] = [m for m in await store.messages.recent(scope, 5) if m.role == "user"]
    coffee = (await store.notes.add(scope, "Anna trinkt morgens immer Kaffee", source_message_ids=(said.id,))).note
    await store.notes.add(scope, "Anna spielt Cello im Orchester")
    miriam = await store.people.observe(scope, PersonDraft("Miriam", (), "Schwester"), processing="seed")
    await store.people.link_notes(scope, miriam.id, [
        (await store.notes.add(scope, "Annas Schwester Miriam wohnt in Hamburg")).note.id], processing="seed")
    await log_in(bot, page)
    shots = screenshots()
    await page.screenshot(path=str(shots / "overview.png"), full_page=True)

    await page.get_by_role("link", name="Notizen").click()
    await page.get_by_label("Suchen").fill("Kaffee")
    await page.get_by_role("button", name="Anzeigen").click()
    await page.wait_for_load_state()
    found = await page.locator("article.note").all_inner_texts()
    assert found and "Anna trinkt morgens immer Kaffee" in found[0]
    await page.screenshot(path=str(shots / "notes.png"), full_page=True)
    await page.locator("article.note a").first.click()
    await page.get_by_label("Text ändern").fill("Anna trinkt morgens nur noch grünen Tee")
    await page.get_by_role("button", name="Speichern").click()
    await page.wait_for_load_state()
    assert "Geändert." in await page.locator("main").inner_text()
    await page.screenshot(path=str(shots / "note.png"), full_page=True)

    chat.enqueue("Grüner Tee, richtig.")
    await exchange(bot.tg, "Was trinke ich morgens?")
    prompt = chat.calls[-1].prompt
    assert "Anna trinkt morgens nur noch grünen Tee" in prompt and "Anna trinkt morgens immer Kaffee" not in prompt

    await page.get_by_role("link", name="Änderungen").click()
    page.once("dialog", lambda dialog: asyncio.ensure_future(dialog.accept()))
    await page.get_by_role("button", name="Rückgängig machen").first.click()
    await page.wait_for_load_state()
    await page.screenshot(path=str(shots / "changes.png"), full_page=True)
    assert (await store.notes.get(scope, coffee.id)).text == "Anna trinkt morgens immer Kaffee"

    await page.get_by_role("link", name="Menschen").click()
    await page.screenshot(path=str(shots / "people.png"), full_page=True)
    await page.get_by_role("link", name="Miriam").first.click()
    page.once("dialog", lambda dialog: asyncio.ensure_future(dialog.accept()))
    await page.get_by_role("button", name="Vergessen").click()
    await page.wait_for_load_state()
    assert [p.name for p in await store.people.all(scope)] == []
    assert "Miriam" not in await page.locator("main").inner_text()

    await page.get_by_role("button", name="English").click()
    await page.wait_for_load_state()
    assert "People" in await page.locator("nav.sections").inner_text()
