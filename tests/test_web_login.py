"""The web page's way in: a one-time link from /web, the session it starts, and every refusal on the way."""
from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

import pytest

from bot.cli import main
from bot.commands.runner import Commands
from bot.exchange import Incoming
from memory.account.web_access import Redeemed
from memory.store import MemoryStore
from tests.fakes.clock import Clock
from tests.fakes.embedder import FakeEmbedder
from tests.web_kit import WebPage, link_in

ADMIN = "tg:1"


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def web_admins() -> frozenset[str]:
    """mnemo's admins on this module's web page."""
    return frozenset({ADMIN})


@pytest.fixture
def web_clock(clock: Clock) -> Clock:
    """The web page's clock: the test's own, which the tests move."""
    return clock


async def link_for(commands: Commands, user_id: str) -> str:
    reply = await commands.run(user_id, "/web")
    assert reply is not None
    return link_in(reply.bubbles[0])


async def test_a_link_logs_in_once_and_the_page_shows_only_that_persons_memory(web: WebPage) -> None:
    browser = await web.signed_in("tg:42")
    page = await browser.page("/web/")
    assert page.status_code == 200
    assert "Überblick" in page.text and "Abmelden" in page.text
    cookie = page.headers.get("set-cookie")
    assert cookie is None  # the cookie was set once, at login
    again = web.browser()
    path = await link_for(web.commands, "tg:42")
    token = path.split("t=", 1)[1]
    assert (await again.http.post("/web/login", data={"t": token})).status_code == 303
    used = await web.browser().http.post("/web/login", data={"t": token})
    assert used.status_code == 410 and "schon benutzt" in used.text


async def test_the_login_cookie_is_httponly_and_strict(web: WebPage) -> None:
    browser = web.browser()
    path = await link_for(web.commands, "tg:42")
    shown = await browser.http.get(path)
    assert shown.status_code == 200 and 'action="/web/login"' in shown.text
    done = await browser.http.post("/web/login", data={"t": path.split("t=", 1)[1]})
    cookie = done.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie and "max-age=604800" in cookie
    assert "secure" not in cookie  # plain http here; behind an https base URL the cookie is Secure


async def test_a_link_preview_does_not_use_the_link_up(web: WebPage) -> None:
    path = await link_for(web.commands, "tg:42")
    preview = web.browser()
    assert (await preview.http.get(path)).status_code == 200
    assert (await preview.http.get(path)).status_code == 200
    person = web.browser()
    assert (await person.http.post("/web/login", data={"t": path.split("t=", 1)[1]})).status_code == 303


async def test_an_expired_or_unknown_link_is_a_clear_page(web: WebPage, clock: Clock) -> None:
    path = await link_for(web.commands, "tg:42")
    clock.now += 10 * 60 + 1
    expired = await web.browser().http.post("/web/login", data={"t": path.split("t=", 1)[1]})
    assert expired.status_code == 410 and "abgelaufen" in expired.text
    unknown = await web.browser().http.post("/web/login", data={"t": "not-a-token"})
    assert unknown.status_code == 404 and "kenne ich nicht" in unknown.text
    assert (await web.browser().http.get("/web/login")).status_code == 400


async def test_without_a_session_every_page_says_how_to_log_in(web: WebPage, clock: Clock) -> None:
    browser = web.browser()
    page = await browser.http.get("/web/")
    assert page.status_code == 401 and "/web" in page.text
    assert (await browser.http.post("/web/lang", data={"lang": "en"})).status_code == 401
    signed = await web.signed_in("tg:42")
    clock.now += 7 * 86400 + 1  # the session expired
    assert (await signed.http.get("/web/")).status_code == 401


async def test_a_post_without_the_form_token_is_refused_and_changes_nothing(web: WebPage) -> None:
    browser = await web.signed_in("tg:42")
    refused = await browser.post("/web/lang", {"lang": "en", "back": "/web/"}, token=False)
    assert refused.status_code == 403
    wrong = await browser.post("/web/lang", {"lang": "en", "back": "/web/", "csrf": "forged"})
    assert wrong.status_code == 403
    assert "Überblick" in (await browser.page("/web/")).text


async def test_the_language_switch_changes_the_pages_and_refuses_nonsense(web: WebPage) -> None:
    browser = await web.signed_in("tg:42")
    switched = await browser.post("/web/lang", {"lang": "en", "back": "/web/"})
    assert switched.status_code == 303 and switched.headers["location"] == "/web/"
    page = await browser.page("/web/")
    assert "Overview" in page.text and 'lang="en"' in page.text
    assert (await browser.post("/web/lang", {"lang": "fr", "back": "/web/"})).status_code == 400
    assert (await browser.post("/web/lang", {"lang": "de", "back": "https://evil.example/"})).status_code == 400
    assert (await browser.post("/web/lang", {"lang": "de", "back": "//evil.example/web"})).status_code == 400


async def test_logging_out_ends_the_session(web: WebPage) -> None:
    browser = await web.signed_in("tg:42")
    cookies = dict(browser.http.cookies)
    out = await browser.post("/web/logout")
    assert out.status_code == 200
    thief = web.browser()
    thief.http.cookies.update(cookies)  # the old cookie, kept elsewhere, opens nothing now
    assert (await thief.http.get("/web/")).status_code == 401


async def test_every_answer_carries_the_security_headers(web: WebPage) -> None:
    browser = await web.signed_in("tg:42")
    page = await browser.page("/web/")
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["x-frame-options"] == "DENY"
    assert page.headers["referrer-policy"] == "no-referrer"
    assert page.headers["cache-control"] == "no-store"
    css = await browser.http.get("/web/static/style.css")
    assert css.status_code == 200 and "max-age" in css.headers["cache-control"]


async def test_group_memory_is_for_mnemos_admins_only(web: WebPage) -> None:
    group = "tg:group:-100"
    await web.engine.handle(Incoming(group, "Wir planen das Sommerfest.", sender="tg:42"))
    scope = await web.engine.scope_for(group)
    member = await web.signed_in("tg:42")
    assert (await member.page(f"/web/g/{scope.id}/")).status_code == 404
    admin = await web.signed_in(ADMIN)
    page = await admin.page(f"/web/g/{scope.id}/")
    assert page.status_code == 200 and f"Gedächtnis von „Telegram-Gruppe {scope.id}“" in page.text  # no name known
    assert group not in page.text
    log = (await admin.page(f"/web/g/{scope.id}/log")).text  # a group's messages are its members', not the viewer's
    assert "Sommerfest" in log and " · Mitglied" in log and " · Du" not in log
    own = await web.engine.scope_for("tg:42")
    assert (await admin.page(f"/web/g/{own.id}/")).status_code == 404  # a person's memory is no group's


async def test_in_a_group_web_sends_no_link(web: WebPage) -> None:
    reply = await web.commands.run("tg:group:-100", "/web")
    assert reply is not None and "/web" in reply.bubbles[0] and "login" not in reply.bubbles[0]


async def test_deleteme_logs_every_browser_out(web: WebPage) -> None:
    browser = await web.signed_in("tg:42")
    scope = await web.engine.scope_for("tg:42")
    await web.engine.store.delete_scope(scope)
    assert (await browser.http.get("/web/")).status_code == 401


def test_the_operator_prints_a_link_that_logs_in_once(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    monkeypatch.setenv("MNEMO_DATA_DIR", str(tmp_path))
    argv = ["--env-file", str(tmp_path / "none.env"), "web-link", "--user", "tg:42"]
    assert main(argv) == 1
    assert "MNEMO_WEB_LISTEN" in capsys.readouterr().err  # the page is off: no link
    monkeypatch.setenv("MNEMO_WEB_LISTEN", "127.0.0.1:8377")
    monkeypatch.setenv("MNEMO_WEB_BASE_URL", "https://mnemo.example.org/")

    async def someone_wrote() -> None:
        async with await MemoryStore.open(tmp_path, FakeEmbedder()) as store:
            await store.messages.add(await store.scope("mnemo", "tg:42"), "user", "Hallo")

    asyncio.run(someone_wrote())
    assert main(["--env-file", str(tmp_path / "none.env"), "web-link", "--user", "tg:99"]) == 1
    assert "'tg:99' has not talked" in capsys.readouterr().err
    assert main(argv) == 0
    out = capsys.readouterr().out
    found = re.search(r"https://mnemo\.example\.org/web/login\?t=([\w-]+)", out)
    assert found and "10 minutes" in out

    async def redeem() -> tuple[object, object]:
        async with await MemoryStore.open(tmp_path, FakeEmbedder()) as store:
            first = await store.web.redeem(found.group(1), time.time(), 3600)
            return first, await store.web.redeem(found.group(1), time.time(), 3600)

    first, second = asyncio.run(redeem())
    assert isinstance(first, Redeemed) and first.session.scope.user_id == "tg:42"
    assert second == "used"
