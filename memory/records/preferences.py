"""Per-user preferences, set from the chat: typed reads with defaults, string storage."""
from __future__ import annotations

import re
from dataclasses import dataclass, fields, replace
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from memory.models import Scope
from memory.storage.db import Database, Tx


@dataclass(frozen=True)
class Preferences:
    """What a user chose; the defaults apply until they change something."""

    diary_push: bool = False
    diary_time: str = "23:45"
    reflection_time: str = "22:00"
    active_hours: str = "9-21"
    checkins: bool = True
    timezone: str = ""  # empty: the deployment's MNEMO_TIMEZONE
    morning: str = ""  # the morning brief's local time "HH:MM"; empty: no brief
    morning_days: str = "learned"  # "learned": on the days the person reads in the morning; "daily"
    morning_empty: str = "greeting"  # a brief with nothing to say: "greeting" or "nothing"
    date_notice: str = "day"  # birthdays and yearly dates: on the "day" or the "eve" (the day before)
    place: str = ""  # "52.52,13.4": where the brief's weather is for; empty: no weather
    notices: bool = False  # "💾 gemerkt: …" after an extraction stored something (opt-in)
    language: str = ""  # "de" or "en": what mnemo speaks with them; empty: the deployment's MNEMO_LANGUAGE
    country: str = ""  # ISO code ("AT") of the help numbers in a crisis; empty: by the time zone, else the deployment's

    def hours(self) -> tuple[int, int]:
        """Active hours as (start, end)."""
        start, end = self.active_hours.split("-")
        return int(start), int(end)


# Preferences that are on or off.
SWITCHES = ("diary_push", "checkins", "notices")
# Preferences that take one of a few words (the command maps the user's words to these).
CHOICES = {"morning_days": ("learned", "daily"), "morning_empty": ("greeting", "nothing"),
           "date_notice": ("day", "eve")}


def parse_value(key: str, raw: str) -> Any:
    """Validate and convert a preference value typed by a user; ValueError with a short reason."""
    if key in SWITCHES:
        if raw.lower() in ("on", "an", "ja", "yes", "true", "1"):
            return True
        if raw.lower() in ("off", "aus", "nein", "no", "false", "0"):
            return False
        raise ValueError("on/off")
    if key == "morning" and raw.lower() in ("off", "aus", "nein", "no"):
        return ""
    if key in ("diary_time", "reflection_time", "morning"):
        match = re.fullmatch(r"(\d{1,2})[:.](\d{2})", raw)
        if not match or int(match.group(1)) > 23 or int(match.group(2)) > 59:
            raise ValueError("HH:MM")
        return f"{int(match.group(1)):02d}:{match.group(2)}"
    if key == "active_hours":
        match = re.fullmatch(r"(\d{1,2})\s*-\s*(\d{1,2})", raw)
        if not match or int(match.group(1)) > 24 or int(match.group(2)) > 24:
            raise ValueError("9-21")
        return f"{int(match.group(1))}-{int(match.group(2))}"
    if key in CHOICES:
        if raw not in CHOICES[key]:
            raise ValueError(" | ".join(CHOICES[key]))
        return raw
    if key == "timezone":
        if raw:
            try:
                ZoneInfo(raw)
            except (ValueError, ZoneInfoNotFoundError) as exc:
                raise ValueError("Europe/Berlin") from exc
        return raw
    if key == "language":
        if raw not in ("", "de", "en"):
            raise ValueError("de | en")
        return raw
    if key == "country":
        if raw and not re.fullmatch(r"[A-Z]{2}", raw):
            raise ValueError("DE")
        return raw
    if key == "place":
        place = parse_place(raw)
        if place is None:
            raise ValueError("52.52,13.40")
        return f"{place[0]:g},{place[1]:g}"
    raise ValueError(f"unknown preference {key}")


def parse_place(raw: str) -> tuple[float, float] | None:
    """'52.52,13.40' as (latitude, longitude), or None when it is not a place on earth."""
    parts = raw.replace(" ", "").split(",")
    if len(parts) != 2:
        return None
    try:
        lat, lon = float(parts[0]), float(parts[1])
    except ValueError:
        return None
    return (lat, lon) if -90 <= lat <= 90 and -180 <= lon <= 180 else None


async def preference_written(tx: Tx, scope: Scope, key: str, value: Any) -> None:
    """`PreferenceStore.set` within a transaction of the caller's (a zone change and what moves with it, together)."""
    stored = ("1" if value else "0") if isinstance(value, bool) else str(value)
    await tx.execute("INSERT INTO preferences(scope_id, key, value, changes) VALUES (?, ?, ?, 1)"
                     " ON CONFLICT(scope_id, key) DO UPDATE SET value = excluded.value,"
                     " changes = preferences.changes + 1", (scope.id, key, stored))


class PreferenceStore:
    """Read and change preferences of a scope."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def get(self, scope: Scope) -> Preferences:
        """The user's preferences with defaults filled in."""
        async with self.db.reading() as tx:
            rows = dict(await tx.fetchall("SELECT key, value FROM preferences WHERE scope_id = ?", (scope.id,)))
        prefs = Preferences()
        types = {f.name: f.type for f in fields(Preferences)}
        values: dict[str, Any] = {}
        for key, raw in rows.items():
            if key in types:
                values[key] = raw == "1" if key in SWITCHES else raw
        return replace(prefs, **values)

    async def set(self, scope: Scope, key: str, value: Any) -> Preferences:
        """Store one preference (already validated); its count of changes moves in the same statement (`version`)."""
        async with self.db.transaction() as tx:
            await preference_written(tx, scope, key, value)
        return await self.get(scope)

    async def version(self) -> tuple[int, int]:
        """A fingerprint of every scope's preferences: it moves when any process sets one (or a scope is erased).
        The scheduler's leader watches it to move the jobs of a setting another worker took."""
        async with self.db.reading() as tx:
            row = await tx.fetchone("SELECT count(*), coalesce(sum(changes), 0) FROM preferences", ())
        return int(row[0]), int(row[1])
