"""Help fitted to the person (issue 51): the help numbers of their country in their language, for themselves or for
someone they know; the country from /settings land, else their time zone, else the deployment's; the language from
their messenger at first contact, else /settings sprache, else the deployment's; and the rest of their turn in it."""
from __future__ import annotations

import re
from collections.abc import AsyncIterator

import pytest

from bot.channels.telegram.channel import TelegramChannel
from bot.conversation.engine import Engine, EngineConfig, Incoming
from bot.conversation.help_lines import (
    EMERGENCY,
    HELP_COUNTRIES,
    country_named,
    country_of_zone,
    crisis_help,
    crisis_help_other,
    language_of_code,
)
from bot.conversation.person import Person, meet, person_from
from bot.texts import t
from memory import Preferences
from memory.records.preferences import parse_value
from memory.store import MemoryStore
from tests.fakes.llm import ScriptedLLM
from tests.fakes.telegram_api import FakeTelegram
from tests.test_telegram import USER, make_channel

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")

# What each country's help text must name (its crisis lines and its emergency number), checked in both languages.
NUMBERS = {
    "DE": ("0800 111 0 111", "0800 111 0 222", "116 123", "112"), "AT": ("142", "147", "144", "112"),
    "CH": ("143", "147", "144", "112"), "GB": ("116 123", "85258", "999"), "IE": ("116 123", "1800 247 247", "50808"),
    "US": ("988", "911"), "CA": ("988", "911"), "AU": ("13 11 14", "000"), "NL": ("113", "0800-0113", "112"),
    "FR": ("3114", "112", "15"),
}


def test_every_supported_country_has_its_numbers_in_both_languages_for_oneself_and_for_another() -> None:
    assert set(HELP_COUNTRIES) == set(NUMBERS) == set(EMERGENCY)
    for country, numbers in NUMBERS.items():
        for lang in ("de", "en"):
            for text in (crisis_help(country, lang), crisis_help_other(country, lang)):
                assert all(number in text for number in numbers), (country, lang, text)
                assert "{" not in text and "help_" not in text
        assert crisis_help(country, "de") != crisis_help(country, "en")
        assert crisis_help(country, "de") != crisis_help_other(country, "de")
    assert crisis_help("de", "de") == crisis_help("DE", "de")  # a code in lower case is the same country
    assert "Wenn jemand, den du kennst" in crisis_help_other("DE", "de")
    assert "someone you know" in crisis_help_other("US", "en")


@pytest.mark.parametrize("country", ["IT", "JP", "", "XX"])
def test_a_country_without_numbers_here_gets_the_worldwide_finder_and_the_local_emergency_number(country: str) -> None:
    for lang, local in (("de", "Notrufnummer deines Landes"), ("en", "your country's emergency number")):
        text = crisis_help(country, lang)
        assert "findahelpline.com" in text and local in text
        assert not re.search(r"\b(0800|116 123|988|911)\b", text)


def test_a_country_is_named_by_its_code_or_its_german_or_english_name() -> None:
    assert country_named("DE") == country_named("de") == country_named("Deutschland") == "DE"
    assert country_named("Österreich") == country_named("oesterreich") == country_named("Austria") == "AT"
    assert country_named("Schweiz") == "CH" and country_named("Irland") == country_named("Ireland") == "IE"
    assert country_named("UK") == country_named("Großbritannien") == country_named("England") == "GB"
    assert country_named("USA") == country_named("U.S.A.") == country_named("us") == "US"
    assert country_named("Kanada") == "CA" and country_named("Australien") == "AU"
    assert country_named("Niederlande") == country_named("Holland") == "NL" and country_named("Frankreich") == "FR"
    assert country_named("IT") == "IT"  # a country mnemo has no numbers for is still a country
    assert country_named("standard") == ""  # back to the time zone's, else the deployment's
    assert country_named("Atlantis") is None and country_named("QQ") is None and country_named("") is None
    assert parse_value("country", "AT") == "AT" and parse_value("country", "") == ""
    assert parse_value("language", "en") == "en" and parse_value("language", "") == ""
    for key, bad in (("country", "Austria"), ("country", "at"), ("language", "fr")):
        with pytest.raises(ValueError):
            parse_value(key, bad)


def test_a_time_zone_names_its_country() -> None:
    expected = {"Europe/Berlin": "DE", "Europe/Vienna": "AT", "Europe/Zurich": "CH", "Europe/London": "GB",
                "Europe/Dublin": "IE", "America/New_York": "US", "America/Los_Angeles": "US",
                "America/Indiana/Indianapolis": "US", "America/Toronto": "CA", "America/Vancouver": "CA",
                "Australia/Sydney": "AU", "Australia/Perth": "AU", "Europe/Amsterdam": "NL", "Europe/Paris": "FR",
                "Europe/Rome": "IT", "Asia/Tokyo": "JP"}
    assert {zone: country_of_zone(zone) for zone in expected} == expected
    assert country_of_zone("UTC") is None and country_of_zone("Etc/GMT+1") is None


def test_a_messengers_language_code_names_the_language_mnemo_speaks() -> None:
    assert language_of_code("en-US") == language_of_code("en_GB") == language_of_code("EN") == "en"
    assert language_of_code("de") == language_of_code("de-AT") == language_of_code("de-CH") == "de"
    assert language_of_code("fr") is None and language_of_code("") is None and language_of_code(None) is None


def test_the_person_is_their_own_choice_then_their_time_zone_then_the_deployments() -> None:
    assert person_from(Preferences(), "de", "DE") == Person("de", "DE")
    assert person_from(Preferences(timezone="America/Chicago"), "de", "DE") == Person("de", "US")
    assert person_from(Preferences(timezone="America/Chicago", country="IE", language="en"), "de", "DE") == \
        Person("en", "IE")
    assert person_from(Preferences(timezone="UTC"), "en", "GB") == Person("en", "GB")


async def test_the_language_is_kept_at_first_contact_only(store: MemoryStore) -> None:
    new = await store.scope("mnemo", "tg:1")
    assert await meet(store, new, "en-US") == "en" and (await store.preferences.get(new)).language == "en"
    assert await meet(store, new, "de") is None and (await store.preferences.get(new)).language == "en"

    known = await store.scope("mnemo", "tg:2")
    await store.messages.add(known, "user", "Hallo")
    assert await meet(store, known, "en") is None and (await store.preferences.get(known)).language == ""
    group = await store.scope("mnemo", "tg:group:-100")
    assert await meet(store, group, "en") is None
    french = await store.scope("mnemo", "tg:3")
    assert await meet(store, french, "fr-FR") is None and (await store.preferences.get(french)).language == ""


async def test_the_engine_speaks_the_persons_language_and_gives_their_countrys_numbers(
    store: MemoryStore, chat: ScriptedLLM, background: ScriptedLLM,
) -> None:
    engine = Engine(store, chat, background, EngineConfig(relevance_floor=0.0))  # the deployment: German, DE
    scope = await engine.scope_for("ny")
    await store.preferences.set(scope, "language", "en")
    await store.preferences.set(scope, "timezone", "America/New_York")
    chat.enqueue("I'm here with you.")
    reply = await engine.handle(Incoming("ny", "I want to kill myself"))
    assert reply is not None and reply.bubbles == (crisis_help("US", "en"), "I'm here with you.")
    assert "Answer in English" in chat.calls[-1].prompt and crisis_help("US", "en") in chat.calls[-1].prompt
    reply = await engine.handle(Incoming("ny", "x" * 5000))  # a refusal in their language too
    assert reply is not None and reply.bubbles == (t("en", "too_long", size=5000, limit=4000),)
    await engine.drain()
    await engine.close()


@pytest.fixture
async def telegram(tg: FakeTelegram, store: MemoryStore, chat: ScriptedLLM,
                   background: ScriptedLLM) -> AsyncIterator[TelegramChannel]:
    engine = Engine(store, chat, background, EngineConfig(relevance_floor=0.0))
    channel = make_channel(tg, engine)
    await channel.start()
    yield channel
    await channel.stop()
    await engine.drain()
    await engine.close()


async def said(tg: FakeTelegram, text: str, replies: int = 1, language_code: str = "en-US") -> list[str]:
    """Send a text as Anna, whose Telegram speaks `language_code`; the bot's next `replies` texts."""
    before = len(tg.sent)
    tg.send_text(USER, text, language_code=language_code)
    return [m["text"] for m in (await tg.wait_for_sent(before + replies))[before:]]


async def test_on_telegram_a_new_person_is_spoken_to_in_their_messengers_language_and_may_change_it(
    tg: FakeTelegram, telegram: TelegramChannel, chat: ScriptedLLM, store: MemoryStore,
) -> None:
    [usage] = await said(tg, "/settings")  # the very first contact: a command, in English already
    assert usage.startswith(t("en", "settings_head")) and t("en", "settings_language", language="English") in usage
    assert t("en", "settings_country_default", country="DE") in usage
    chat.enqueue("I'm here.")
    assert await said(tg, "I want to kill myself", replies=2) == [crisis_help("DE", "en"), "I'm here."]

    [saved] = await said(tg, "/settings country USA")
    assert saved.startswith(t("en", "settings_saved")) and t("en", "settings_country", country="US") in saved
    chat.enqueue("I'm here.")
    assert (await said(tg, "I want to kill myself", replies=2))[0] == crisis_help("US", "en")

    [unknown] = await said(tg, "/settings country Atlantis")
    assert unknown == t("en", "settings_country_unknown", country="Atlantis")
    await said(tg, "/settings country standard")
    [zone] = await said(tg, "/settings timezone Vienna")
    assert t("en", "settings_country_zone", country="AT") in zone

    [german] = await said(tg, "/settings language deutsch")  # the answer already in the language chosen
    assert german.startswith(t("de", "settings_saved")) and t("de", "settings_language", language="Deutsch") in german
    chat.enqueue("Ich bin da.")
    assert await said(tg, "Ich will nicht mehr leben.", replies=2) == [crisis_help("AT", "de"), "Ich bin da."]
    [helped] = await said(tg, "/help")
    assert helped.startswith(t("de", "help_head"))
    scope = await telegram.engine.scope_for(f"tg:{USER}")
    assert (await store.preferences.get(scope)).language == "de"


async def test_someone_mnemo_knows_keeps_the_deployments_language(
    tg: FakeTelegram, telegram: TelegramChannel, chat: ScriptedLLM, store: MemoryStore,
) -> None:
    scope = await telegram.engine.scope_for(f"tg:{USER}")
    await store.messages.add(scope, "user", "Hallo, ich bin Anna")  # spoken with before this version
    chat.enqueue("Ich bin da.")
    assert (await said(tg, "Ich will nicht mehr leben.", replies=2))[0] == crisis_help("DE", "de")
    assert (await store.preferences.get(scope)).language == ""
