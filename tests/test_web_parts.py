"""The web tools' parts: each search backend against a local fake of its API, the settings that switch them on,
the address checks and the sources line (pure), /settings, /export and /deleteme with the web log."""
from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from bot.app import open_toolboxes
from bot.commands.runner import Commands
from bot.conversation.engine import Engine, EngineConfig
from bot.conversation.sources import sources_line
from bot.errors import ConfigError
from bot.settings import Settings
from bot.web_tools.errors import SearchFailed
from bot.web_tools.pages import checked_url, refusal, still_allowed
from bot.web_tools.search import make_search
from bot.web_tools.toolbox import WebTools, day_bounds, limit_reached, may_follow
from memory.account.erasure import scoped_tables
from memory.store import MemoryStore
from tests.fakes.llm import ScriptedLLM
from tests.fakes.web import FakeSearchApis
from tests.test_consistency import ENGLISH

BERLIN = ZoneInfo("Europe/Berlin")
NOON = datetime(2026, 3, 10, 12, 0, tzinfo=BERLIN).timestamp()


@pytest.fixture
async def apis() -> AsyncIterator[FakeSearchApis]:
    async with FakeSearchApis() as fake:
        yield fake


def settings(**values: Any) -> Settings:
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


def backend(kind: str, apis: FakeSearchApis, key: str = "") -> dict[str, Any]:
    """make_search's arguments for one backend on the fakes."""
    return {"searxng": {"searxng_url": apis.searxng_url},
            "brave": {"brave_key": key or "brave-key", "brave_url": apis.brave_url},
            "tavily": {"tavily_key": key or "tavily-key", "tavily_url": apis.tavily_url}}[kind]


# --- the backends, each against its fake -------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["searxng", "brave", "tavily"])
async def test_each_backend_finds_titles_urls_and_plain_snippets(apis: FakeSearchApis, kind: str) -> None:
    search = make_search(kind, timeout=3.0, **backend(kind, apis))
    assert search is not None
    found = await search.search("Leipzig Einwohner", 5)
    await search.aclose()  # type: ignore[attr-defined]
    assert [(r.title, r.url) for r in found] == [("Leipzig – Wikipedia", "https://de.wikipedia.org/wiki/Leipzig"),
                                               ("Stadt Leipzig: Zahlen", "https://www.leipzig.de/statistik")]
    assert found[0].snippet == "Leipzig ist mit 628.000 Einwohnern die größte Stadt im Freistaat Sachsen."
    engine, query, key = apis.requests[0]
    assert (engine, query) == (kind, "Leipzig Einwohner")
    assert key == {"searxng": "json", "brave": "brave-key", "tavily": "Bearer tavily-key"}[kind]


@pytest.mark.parametrize("kind", ["brave", "tavily"])
async def test_a_wrong_key_is_a_clear_failure(apis: FakeSearchApis, kind: str) -> None:
    search = make_search(kind, timeout=3.0, **backend(kind, apis, key="wrong"))
    assert search is not None
    with pytest.raises(SearchFailed, match="answered with status 401"):
        await search.search("Leipzig", 5)
    await search.aclose()  # type: ignore[attr-defined]


async def test_searxng_without_json_enabled_says_where_to_look(apis: FakeSearchApis) -> None:
    apis.status = 403  # what SearXNG answers format=json when json is not in its search.formats
    search = make_search("searxng", timeout=3.0, searxng_url=apis.searxng_url + "/search")
    assert search is not None
    with pytest.raises(SearchFailed) as failed:
        await search.search("Leipzig", 5)
    await search.aclose()  # type: ignore[attr-defined]
    assert str(failed.value) == "SearXNG answered with status 403 (is json in its search.formats?)"


async def test_results_without_a_web_address_are_left_out_and_none_is_no_error(apis: FakeSearchApis) -> None:
    apis.results = [{"title": "Datei", "url": "file:///etc/passwd", "text": "x"},
                    {"title": "", "url": "https://example.org/a", "text": "<b>fett</b> &amp; klar"}]
    search = make_search("searxng", timeout=3.0, searxng_url=apis.searxng_url)
    assert search is not None
    [only] = await search.search("x", 5)
    assert (only.title, only.url, only.snippet) == ("https://example.org/a", "https://example.org/a", "fett & klar")
    apis.results = []
    assert await search.search("nichts", 5) == []
    await search.aclose()  # type: ignore[attr-defined]


# --- the settings ------------------------------------------------------------------------------------------------


async def test_with_no_web_setting_no_toolbox_is_opened(store: MemoryStore) -> None:
    async with contextlib.AsyncExitStack() as stack:
        assert not any(isinstance(box, WebTools) for box in await open_toolboxes(settings(), store, stack))


async def test_the_settings_open_the_web_toolbox_and_the_stack_closes_it(store: MemoryStore,
                                                                        apis: FakeSearchApis) -> None:
    config = settings(web_search="SearXNG", searxng_url=apis.searxng_url, web_daily_limit=5)
    async with contextlib.AsyncExitStack() as stack:
        [box] = [box for box in await open_toolboxes(config, store, stack) if isinstance(box, WebTools)]
        assert box.daily_limit == 5 and box.pages is None
        client = box.search.client  # type: ignore[union-attr]
    assert client.is_closed
    pages_only = settings(web_read_pages=True, web_allow_hosts="nas.local, Wiki.Home.")
    async with contextlib.AsyncExitStack() as stack:
        [box] = [box for box in await open_toolboxes(pages_only, store, stack) if isinstance(box, WebTools)]
        assert isinstance(box, WebTools) and box.search is None
        assert box.pages.allowed == frozenset({"nas.local", "wiki.home"})  # type: ignore[union-attr]


@pytest.mark.parametrize(("values", "message"), [
    ({"web_search": "searxng"}, "MNEMO_WEB_SEARCH=searxng needs MNEMO_SEARXNG_URL"),
    ({"web_search": "brave", "brave_api_key": " "}, "MNEMO_WEB_SEARCH=brave needs MNEMO_BRAVE_API_KEY"),
    ({"web_search": "tavily"}, "MNEMO_WEB_SEARCH=tavily needs MNEMO_TAVILY_API_KEY"),
])
async def test_a_backend_without_its_url_or_key_stops_the_start_with_one_sentence(
    store: MemoryStore, values: dict[str, str], message: str,
) -> None:
    with pytest.raises(ConfigError, match=message):
        async with contextlib.AsyncExitStack() as stack:
            await open_toolboxes(settings(**values), store, stack)


def test_the_search_keys_are_masked_in_logs() -> None:
    config = settings(brave_api_key="brave-secret", tavily_api_key="tvly-secret")
    assert {"brave-secret", "tvly-secret"} <= set(config.secrets())


# --- pure decisions ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("address", "reason"), [
    ("127.0.0.1", "loopback"), ("127.8.9.10", "loopback"), ("::1", "loopback"), ("::ffff:127.0.0.1", "loopback"),
    ("2002:7f00:1::", "loopback"), ("10.1.2.3", "private"), ("172.16.0.9", "private"), ("192.168.178.1", "private"),
    ("fd00::1", "private"), ("169.254.169.254", "link-local"), ("fe80::1%eth0", "link-local"),
    ("0.0.0.0", "unspecified"), ("::", "unspecified"), ("224.0.0.251", "multicast"), ("ff02::1", "multicast"),
    ("240.0.0.1", "reserved"), ("100.64.0.1", "non-public"),
    ("93.184.215.14", None), ("2606:4700:4700::1111", None), ("8.8.8.8", None),
])
def test_only_public_addresses_may_be_fetched(address: str, reason: str | None) -> None:
    assert refusal(address) == reason


@pytest.mark.parametrize("url", ["https://example.org/a?b=1", "HTTP://Example.ORG", "http://[2606:4700::1]:8080/"])
def test_http_and_https_addresses_pass_the_scheme_check(url: str) -> None:
    assert checked_url(url).scheme in ("http", "https")


def test_a_private_host_is_allowed_only_while_every_hop_before_it_was_allowed() -> None:
    allowed = frozenset({"wiki.home", "nas.local"})
    def chain(*hosts: str) -> list[bool]:
        so_far, verdicts = True, []
        for host in hosts:
            so_far = still_allowed(so_far, host, allowed)
            verdicts.append(so_far)
        return verdicts

    assert chain("Wiki.Home.", "nas.local") == [True, True]
    assert chain("wiki.home", "127.0.0.1") == [True, False]
    assert chain("news.example", "wiki.home") == [False, False], "a public page cannot redirect into the network"


@pytest.mark.parametrize(("url", "follows"), [
    ("https://example.com/x", True),
    ("HTTPS://Example.COM:443/x/#oben", True),  # the same address, written otherwise
    ("https://ex", False),  # a part of what the person wrote is not an address they wrote
    ("https://example.com", False),
    ("https://example.com/", False),
    ("https://example.com/x/y", False),
    ("https://example.com/x?name=Anna", False),
    ("https://example.co", False),
    ("http://example.com/x", False),
    ("https://anna@example.com/x", False),
    ("https://de.wikipedia.org/wiki/Leipzig_(Stadt)", True),  # brackets of the address stay, the sentence's go
    ("https://de.wikipedia.org/wiki/Leipzig_(Stadt", False),
    ("https://kino.example/programm?tag=heute", True),  # the full stop after it is the sentence's
    ("https://found.example/a", True),  # a search of the turn found it
    ("https://found.example", False),
    ("", False),
])
def test_after_outside_text_only_a_whole_address_the_person_wrote_or_a_search_found_is_followed(
    url: str, follows: bool,
) -> None:
    wrote = ("Lies https://example.com/x und (siehe https://de.wikipedia.org/wiki/Leipzig_(Stadt)), dann"
             " https://kino.example/programm?tag=heute.")
    assert may_follow(url, wrote, {"https://found.example/a/"}) is follows


def test_the_sources_line_names_each_site_once_and_counts_the_rest() -> None:
    urls = ["https://www.leipzig.de/a", "https://de.wikipedia.org/wiki/Leipzig", "https://leipzig.de/b",
            "http://a.example/", "http://b.example/", "http://c.example/", "http://d.example/"]
    assert sources_line(urls, "de") == "Quellen: leipzig.de, de.wikipedia.org, a.example, b.example, c.example +1"
    assert sources_line(urls[:2], "en") == "Sources: leipzig.de, de.wikipedia.org"
    assert sources_line([], "de") == ""


def test_the_persons_day_has_23_hours_when_the_clocks_go_forward() -> None:
    start, end = day_bounds(datetime(2026, 3, 29, 15, 0, tzinfo=BERLIN).timestamp(), BERLIN)
    assert (end - start) / 3600 == 23
    assert datetime.fromtimestamp(start, BERLIN).hour == 0
    tokyo = ZoneInfo("Asia/Tokyo")  # the same moment is another day elsewhere
    assert day_bounds(datetime(2026, 3, 10, 23, 30, tzinfo=BERLIN).timestamp(), tokyo)[0] == datetime(
        2026, 3, 11, tzinfo=tokyo).timestamp()


def test_a_limit_of_zero_is_no_limit() -> None:
    assert not limit_reached(1000, 0) and not limit_reached(29, 30) and limit_reached(30, 30)


# --- /settings, /export, /deleteme -------------------------------------------------------------------------------


def commands_for(store: MemoryStore, boxes: list[WebTools], lang: str = "de") -> Commands:
    engine = Engine(store, ScriptedLLM(), ScriptedLLM(), EngineConfig(relevance_floor=0.0, language=lang),
                    clock=lambda: NOON, toolboxes=boxes)
    return Commands(engine)  # the deployment's language: a person who chose none is spoken to in it


async def shown(commands: Commands, text: str, user: str = "tg:1") -> str:
    reply = await commands.run(user, text)
    assert reply is not None
    return "\n".join(reply.bubbles)


async def test_settings_show_todays_web_count_in_the_persons_day(store: MemoryStore) -> None:
    scope = await store.scope("mnemo", "tg:1")
    await store.web_log.add(scope, "search", "Leipzig", NOON - 3600, 2, 80)
    await store.web_log.add(scope, "page", "https://example.org/", NOON - 60, 1, 900, "failed: timeout")
    await store.web_log.add(scope, "search", "gestern", NOON - 86400, 2, 80)
    on = await shown(commands_for(store, [WebTools(daily_limit=30)]), "/settings")
    assert "Websuche heute: 2 von 30 (Suchen und gelesene Seiten)" in on
    assert not ENGLISH.search(on), on
    english = await shown(commands_for(store, [WebTools(daily_limit=30)], "en"), "/settings")
    assert "Web today: 2 of 30 (searches and pages read)" in english
    unlimited = await shown(commands_for(store, [WebTools(daily_limit=0)]), "/settings")
    assert "Websuche heute: 2 (Suchen und gelesene Seiten)" in unlimited
    assert "Websuche heute: 2 (Suchen" in await shown(commands_for(store, []), "/settings"), "off now, used today"
    assert "Websuche" not in await shown(commands_for(store, []), "/settings", user="tg:2"), "off and unused"


async def test_export_carries_the_web_log_and_deleteme_erases_it(store: MemoryStore) -> None:
    anna, ben = await store.scope("mnemo", "tg:1"), await store.scope("mnemo", "tg:2")
    for scope in (anna, ben):
        await store.web_log.add(scope, "page", "https://example.org/geheim", NOON, 1, 500)
    commands = commands_for(store, [WebTools()])
    exported = await commands.run("tg:1", "/export")
    assert exported is not None and exported.document is not None
    assert [e["target"] for e in json.loads(exported.document.content)["web_log"]] == ["https://example.org/geheim"]
    async with store.db.reading() as tx:
        assert "web_log" in await scoped_tables(tx), "every table with a scope id is erased by /deleteme"
    await commands.run("tg:1", "/deleteme")
    await commands.press("tg:1", "deleteme:yes")
    assert await store.web_log.latest(anna) == []
    assert len(await store.web_log.latest(ben)) == 1
    await commands.engine.close()
