"""A person sets their own time zone with /settings zeitzone (an IANA name or a city): the reminders they ask for are
understood and pushed in it, on Telegram's fake Bot API with a fake clock; a zone mnemo does not know changes
nothing."""
from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.commands.time_zones import zone_named
from bot.texts import t
from memory.records.preferences import parse_value
from memory.store import MemoryStore
from tests.fakes.llm import ScriptedLLM
from tests.test_scheduler import BERLIN, Clock, background_model, drive, on_telegram
from tests.test_telegram import exchange

TOKYO = ZoneInfo("Asia/Tokyo")
WEDNESDAY = datetime(2026, 11, 25, 14, 30, tzinfo=BERLIN)  # 22:30 in Tokyo


def test_a_zone_is_named_by_its_iana_name_a_city_or_the_last_part_of_its_name() -> None:
    assert zone_named("Europe/Berlin") == zone_named("europe/berlin") == "Europe/Berlin"
    assert zone_named("Berlin") == zone_named("München") == zone_named("Muenchen") == "Europe/Berlin"
    assert zone_named("Wien") == zone_named("Vienna") == "Europe/Vienna"
    assert zone_named("New York") == zone_named("new_york") == zone_named("NYC") == "America/New_York"
    assert zone_named("Tokio") == zone_named("Tokyo") == zone_named("  tokyo ") == "Asia/Tokyo"
    assert zone_named("Zürich") == zone_named("Zurich") == "Europe/Zurich"
    assert zone_named("São Paulo") == zone_named("Sao Paulo") == "America/Sao_Paulo"
    assert zone_named("America/Argentina/Buenos_Aires") == "America/Argentina/Buenos_Aires"
    assert zone_named("UTC") == "UTC"
    assert zone_named("standard") == zone_named("default") == ""  # back to the deployment's zone
    assert zone_named("Mars") is None and zone_named("") is None and zone_named("Europe/Atlantis") is None
    assert parse_value("timezone", "Asia/Tokyo") == "Asia/Tokyo" and parse_value("timezone", "") == ""
    with pytest.raises(ValueError):
        parse_value("timezone", "Mars/Olympus")


async def test_a_reminder_is_understood_and_pushed_in_the_persons_own_zone(store: MemoryStore, tmp_path: Path) -> None:
    clock = Clock(WEDNESDAY.timestamp())
    chat, background = ScriptedLLM("chat"), ScriptedLLM("background")
    background.responder = background_model(None)  # type: ignore[assignment]
    async with on_telegram(store, tmp_path, clock, chat, background,
                           silence=timedelta(hours=48)) as (tg, engine, scheduler):
        scope = await engine.scope_for("tg:42")
        [unknown] = await exchange(tg, "/settings zeitzone Mars", user=42)
        assert unknown["text"] == t("de", "settings_zone_unknown", zone="Mars")
        assert (await store.preferences.get(scope)).timezone == "", "nothing changed"

        [saved] = await exchange(tg, "/settings zeitzone Tokio", user=42)
        assert saved["text"].startswith(t("de", "settings_saved"))
        assert t("de", "settings_zone", zone="Tokio (UTC+9)", time="22:30") in saved["text"]
        assert (await store.preferences.get(scope)).timezone == "Asia/Tokyo"

        # 'morgen' is Thursday in Tokyo; 09:00 there is 01:00 in Berlin, the deployment's zone
        [confirm] = await exchange(tg, "Erinnere mich morgen um 9 an den Zahnarzt", user=42)
        assert confirm["text"] == "⏰ Ich erinnere dich am Do, 26.11. um 09:00 an: Zahnarzt"
        [reminder] = await store.reminders.active(scope)
        assert reminder.due_at == datetime(2026, 11, 26, 9, 0, tzinfo=TOKYO)
        [listing] = await exchange(tg, "/reminders", user=42)
        assert "Do, 26.11. um 09:00" in listing["text"]

        await drive(scheduler, clock, datetime(2026, 11, 26, 0, 45, tzinfo=BERLIN))
        assert [m["text"] for m in tg.sent].count("⏰ Zahnarzt") == 0, "nothing before its time in Tokyo"
        await drive(scheduler, clock, datetime(2026, 11, 26, 1, 0, tzinfo=BERLIN))
        assert tg.sent[-1]["text"] == "⏰ Zahnarzt"

        [shown] = await exchange(tg, "/settings zeitzone standard", user=42)
        assert t("de", "settings_zone_default", zone="Berlin (UTC+1)") in shown["text"]
        assert (await store.preferences.get(scope)).timezone == ""
