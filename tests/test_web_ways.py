"""The web page's small ways: its icon (an inline SVG, no file), a way back from every error page, dates typed the
German way ('24.12.2026', '24.12.') wherever a date is typed, and dates shown one way on every page; a group by
the name its messenger gave it, never by its raw id."""
from __future__ import annotations

import datetime as dt
import re

import pytest

from bot.exchange import Incoming
from bot.web_page.dates import read_day, read_moment, shown_moment, shown_yearly
from memory.account.pairing import GROUP_TITLE
from tests.test_web_people import miriam
from tests.web_kit import WebPage

USER = "tg:42"
ADMIN = "tg:1"
TODAY = dt.date(2026, 3, 10)
BERLIN = dt.timezone(dt.timedelta(hours=1))


async def test_the_page_has_an_icon_drawn_inline(web: WebPage) -> None:
    browser = await web.signed_in(USER)
    for path in ("/web/favicon.svg", "/favicon.ico"):
        icon = await browser.page(path)
        assert icon.status_code == 200 and icon.headers["content-type"] == "image/svg+xml"
        assert icon.text.startswith("<svg") and "http" not in icon.text.replace("http://www.w3.org/2000/svg", "")
    assert '<link rel="icon" href="/web/favicon.svg" type="image/svg+xml">' in (await browser.page("/web/")).text
    assert '<link rel="icon"' in (await web.browser().page("/web/")).text  # the logged-out page too


async def test_every_error_page_has_a_way_back(web: WebPage) -> None:
    browser = await web.signed_in(USER)
    for path, status, back in (("/web/nothing/here", 404, "/web/"), ("/web/notes/999", 404, "/web/"),
                               ("/web/people/999", 404, "/web/"), ("/web/log?from=gestern", 400, "/web/log"),
                               ("/web/notes?kind=secret", 400, "/web/notes")):
        page = await browser.page(path)
        assert page.status_code == status, path
        assert f'<a class="back" href="{back}">' in page.text, path
    assert "← Gesprächsverlauf" in (await browser.page("/web/log?from=gestern")).text  # to the section it came from
    forged = await browser.post("/web/notes/1/edit", {"text": "x"}, token=False)
    assert forged.status_code == 403 and '<a class="back" href="/web/">' in forged.text
    logged_out = await web.browser().page("/web/notes")
    assert logged_out.status_code == 401 and 'class="back"' not in logged_out.text  # nothing to go back to


@pytest.fixture
def web_admins() -> frozenset[str]:
    return frozenset({ADMIN})


def test_typed_days_are_read_the_german_way_and_the_iso_way() -> None:
    assert [read_day(text, TODAY) for text in ("24.12.2026", "24.12.26", "24.12.", "24.12", "1.3.2026",
                                                 "2026-12-24", " 24.12.2026 ", "")] == [
        dt.date(2026, 12, 24), dt.date(2026, 12, 24), dt.date(2026, 12, 24), dt.date(2026, 12, 24),
        dt.date(2026, 3, 1), dt.date(2026, 12, 24), dt.date(2026, 12, 24), None]
    for bad in ("31.02.2026", "gestern", "24.12.2026x", "24.12.202", "2026-13-40", "12/24/2026", "24"):
        with pytest.raises(ValueError, match=re.escape(bad)):
            read_day(bad, TODAY)
    at = dt.datetime(2026, 12, 24, 9, 30, tzinfo=BERLIN)
    for typed in ("24.12.2026 9:30", "24.12. 09:30", "24.12.2026, 9:30 Uhr", "2026-12-24T09:30", "2026-12-24 09:30",
                  "24.12. um 9:30"):
        assert read_moment(typed, BERLIN, TODAY) == at, typed
    assert read_moment("24.12.2026 9", BERLIN, TODAY) == at.replace(minute=0)
    for bad in ("24.12.2026", "24.12.2026 25:00", "morgen", "24.12.2026 9:30 abends"):
        with pytest.raises(ValueError):
            read_moment(bad, BERLIN, TODAY)


def test_days_are_shown_one_way_per_language() -> None:
    noon = dt.datetime(2026, 3, 5, 12, 7, tzinfo=BERLIN).timestamp()
    assert (shown_moment(noon, BERLIN, "de"), shown_moment(noon, BERLIN, "de", day_only=True)) == (
        "05.03.2026 12:07", "05.03.2026")
    assert shown_moment(noon, BERLIN, "en") == "2026-03-05 12:07" and shown_moment(None, BERLIN, "de") == ""
    assert [shown_yearly(3, 5, 1986, "de"), shown_yearly(3, 5, None, "de"), shown_yearly(3, 5, None, "en")] == [
        "05.03.1986", "05.03.", "03-05"]


async def test_german_days_filter_the_log_and_the_notes_as_iso_days_do(web: WebPage) -> None:
    browser = await web.signed_in(USER)
    scope = await web.engine.scope_for(USER)
    zone = web.engine.config.zone
    today = dt.datetime.now(zone).date()
    yesterday = today - dt.timedelta(days=1)
    noon = dt.datetime.combine(yesterday, dt.time(12), zone).timestamp()
    await web.engine.store.messages.add(scope, "user", "Gestern war Markttag", created_at=noon)
    await web.engine.store.notes.add(scope, "Anna war gestern auf dem Markt.", created_at=noon)
    typed = [f"{yesterday:%d.%m.%Y}", f"{yesterday:%d.%m.%y}", f"{yesterday:%Y-%m-%d}"]
    if yesterday.year == today.year:
        typed.append(f"{yesterday:%d.%m.}")  # without a year: this year's
    for day in typed:
        log = await browser.page(f"/web/log?from={day}&to={day}")
        assert log.status_code == 200 and "Gestern war Markttag" in log.text, day
        assert f'name="from" value="{day}"' in log.text  # the field keeps what was typed
        notes = await browser.page(f"/web/notes?from={day}&to={day}")
        assert notes.status_code == 200 and "Anna war gestern auf dem Markt." in notes.text, day
    other = f"{today - dt.timedelta(days=5):%d.%m.%Y}"
    assert "Markttag" not in (await browser.page(f"/web/log?from={other}&to={other}")).text.split("</form>", 1)[1]
    assert 'placeholder="TT.MM.JJJJ"' in log.text


async def test_a_reminders_time_is_typed_and_shown_the_german_way(web: WebPage) -> None:
    browser = await web.signed_in(USER)
    scope = await web.engine.scope_for(USER)
    zone = web.engine.config.zone
    soon = dt.datetime.now(zone).replace(second=0, microsecond=0) + dt.timedelta(days=3)
    tea = await web.engine.store.reminders.add(scope, "Tee kochen", soon.timestamp())
    number = await web.number(scope, "reminder", tea.id)
    page = await browser.page("/web/reminders")
    assert f'value="{soon:%d.%m.%Y %H:%M}"' in page.text and f'<p class="muted">{soon:%d.%m.%Y %H:%M}</p>' in page.text
    later = soon + dt.timedelta(days=1, hours=2)
    typed = f"{later:%d.%m.%Y}, {later.hour}:{later:%M} Uhr"
    assert (await browser.post(f"/web/reminders/{number}/edit", {"text": "Tee", "due": typed})).status_code == 303
    assert (await web.engine.store.reminders.get(scope, tea.id)).due_at.astimezone(zone) == later


async def test_every_page_shows_days_one_way(web: WebPage) -> None:
    scope, person = await miriam(web, USER)
    browser = await web.signed_in(USER)
    await web.engine.store.notes.add(scope, "Anna mag Tee.")
    await web.engine.store.diary.add(scope, "2026-11-02", "Ein ruhiger Tag.")
    await web.engine.store.thoughts.add(scope, "Sie braucht Ruhe.", origin="reflection")
    thoughts = (await browser.page("/web/diary?show=thoughts")).text
    assert " · beim Nachdenken" in thoughts and "reflection" not in thoughts
    one = f"/web/people/{await web.number(scope, 'person', person.id)}"
    pages = [(await browser.page(path)).text for path in ("/web/", "/web/notes", "/web/people", "/web/log",
                                                           "/web/changes", "/web/diary", one)]
    shown = " ".join(re.sub(r"<[^>]+>", " ", page) for page in pages)
    assert "03.03.1986" in shown and "02.11.2026" in shown
    days = re.findall(r"(?<![\d.])\d{1,4}[./-]\d{1,2}[./-]?\d{0,4}(?![\d.])", shown)
    assert days and all(re.fullmatch(r"\d{2}\.\d{2}\.(\d{4})?", day) for day in days), days


async def test_a_group_is_shown_by_its_name_never_its_raw_id(web: WebPage) -> None:
    group = "tg:group:-5001"
    await web.engine.handle(Incoming(group, "Anna: Wir planen das Sommerfest.", sender="tg:42"))
    scope = await web.engine.scope_for(group)
    browser = await web.signed_in(ADMIN)
    unnamed = (await browser.page(f"/web/g/{scope.id}/")).text
    assert f"Telegram-Gruppe {scope.id}" in unnamed and group not in unnamed
    await web.engine.store.state.put(scope, GROUP_TITLE, "Lauftreff Südvorstadt")  # as the channel keeps it
    named = (await browser.page(f"/web/g/{scope.id}/")).text
    assert "Gedächtnis von „Lauftreff Südvorstadt“" in named and group not in named
    assert f'<a href="/web/g/{scope.id}/">Lauftreff Südvorstadt</a>' in (await browser.page("/web/")).text


async def test_the_profile_page_names_keys_and_categories_in_the_viewers_language(web: WebPage) -> None:
    browser = await web.signed_in(USER)
    scope = await web.engine.scope_for(USER)
    await web.engine.store.profile.set(scope, "facts", "work", "Tischler in Leipzig")
    await web.engine.store.profile.set(scope, "life_events", "moved", "2019 nach Leipzig gezogen")
    german = re.sub(r"<[^>]+>", " ", (await browser.page("/web/profile")).text)
    assert "Arbeit : Tischler in Leipzig" in german and "Fakten ·" in german and "Lebensereignisse ·" in german
    assert not re.search(r"\b(work|facts|life_events)\b", german)
    await browser.post("/web/lang", {"lang": "en", "back": "/web/profile"})
    english = re.sub(r"<[^>]+>", " ", (await browser.page("/web/profile")).text)
    assert "Work : Tischler in Leipzig" in english and "Facts ·" in english and "Life events ·" in english
