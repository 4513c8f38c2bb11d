"""Which time zone a person means by what they type in /settings zeitzone: an IANA name, a city in German or English
spelling, or the last part of any IANA name ("Berlin", "New York"); and how a zone is named to them (pure)."""
from __future__ import annotations

import functools
import unicodedata
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, available_timezones

# Common cities whose names are not the last part of their zone's IANA name, in German and English spelling.
CITIES: dict[str, str] = {
    "münchen": "Europe/Berlin", "munich": "Europe/Berlin", "hamburg": "Europe/Berlin", "köln": "Europe/Berlin",
    "cologne": "Europe/Berlin", "frankfurt": "Europe/Berlin", "stuttgart": "Europe/Berlin",
    "düsseldorf": "Europe/Berlin", "leipzig": "Europe/Berlin", "dresden": "Europe/Berlin", "hannover": "Europe/Berlin",
    "bremen": "Europe/Berlin", "nürnberg": "Europe/Berlin", "nuremberg": "Europe/Berlin",
    "deutschland": "Europe/Berlin", "germany": "Europe/Berlin", "wien": "Europe/Vienna", "österreich": "Europe/Vienna",
    "austria": "Europe/Vienna",
    "graz": "Europe/Vienna", "salzburg": "Europe/Vienna", "bern": "Europe/Zurich", "zürich": "Europe/Zurich",
    "genf": "Europe/Zurich", "geneva": "Europe/Zurich", "basel": "Europe/Zurich", "schweiz": "Europe/Zurich",
    "switzerland": "Europe/Zurich", "rom": "Europe/Rome", "mailand": "Europe/Rome", "milan": "Europe/Rome",
    "neapel": "Europe/Rome", "venedig": "Europe/Rome", "florenz": "Europe/Rome", "barcelona": "Europe/Madrid",
    "sevilla": "Europe/Madrid", "mallorca": "Europe/Madrid", "palma": "Europe/Madrid", "lissabon": "Europe/Lisbon",
    "porto": "Europe/Lisbon", "brüssel": "Europe/Brussels", "antwerpen": "Europe/Brussels",
    "den haag": "Europe/Amsterdam", "rotterdam": "Europe/Amsterdam", "kopenhagen": "Europe/Copenhagen",
    "warschau": "Europe/Warsaw", "krakau": "Europe/Warsaw", "krakow": "Europe/Warsaw", "prag": "Europe/Prague",
    "athen": "Europe/Athens", "moskau": "Europe/Moscow", "st. petersburg": "Europe/Moscow",
    "sankt petersburg": "Europe/Moscow", "kiew": "Europe/Kyiv", "kyiv": "Europe/Kyiv", "kiev": "Europe/Kyiv",
    "manchester": "Europe/London", "edinburgh": "Europe/London", "england": "Europe/London",
    "washington": "America/New_York", "boston": "America/New_York", "miami": "America/New_York",
    "philadelphia": "America/New_York", "atlanta": "America/New_York", "new york city": "America/New_York",
    "nyc": "America/New_York", "san francisco": "America/Los_Angeles", "seattle": "America/Los_Angeles",
    "las vegas": "America/Los_Angeles", "san diego": "America/Los_Angeles", "houston": "America/Chicago",
    "dallas": "America/Chicago", "austin": "America/Chicago", "kanada": "America/Toronto",
    "montreal": "America/Toronto", "ottawa": "America/Toronto", "mexiko-stadt": "America/Mexico_City",
    "mexico city": "America/Mexico_City", "rio de janeiro": "America/Sao_Paulo", "rio": "America/Sao_Paulo",
    "são paulo": "America/Sao_Paulo", "tokio": "Asia/Tokyo", "osaka": "Asia/Tokyo", "japan": "Asia/Tokyo",
    "peking": "Asia/Shanghai", "beijing": "Asia/Shanghai", "china": "Asia/Shanghai", "neu-delhi": "Asia/Kolkata",
    "neu delhi": "Asia/Kolkata", "new delhi": "Asia/Kolkata", "delhi": "Asia/Kolkata", "mumbai": "Asia/Kolkata",
    "bangalore": "Asia/Kolkata", "indien": "Asia/Kolkata", "india": "Asia/Kolkata", "hanoi": "Asia/Ho_Chi_Minh",
    "abu dhabi": "Asia/Dubai", "tel aviv": "Asia/Jerusalem", "jerusalem": "Asia/Jerusalem",
    "kapstadt": "Africa/Johannesburg", "cape town": "Africa/Johannesburg", "kairo": "Africa/Cairo",
    "canberra": "Australia/Sydney", "neuseeland": "Pacific/Auckland", "new zealand": "Pacific/Auckland",
    "wellington": "Pacific/Auckland",
}
# The places of IANA names as German speakers write them (the rest read the same in both languages).
GERMAN_NAMES: dict[str, str] = {
    "Vienna": "Wien", "Rome": "Rom", "Lisbon": "Lissabon", "Brussels": "Brüssel", "Copenhagen": "Kopenhagen",
    "Warsaw": "Warschau", "Prague": "Prag", "Athens": "Athen", "Moscow": "Moskau", "Kyiv": "Kiew", "Kiev": "Kiew",
    "Zurich": "Zürich", "Belgrade": "Belgrad", "Bucharest": "Bukarest", "Luxembourg": "Luxemburg",
    "Nicosia": "Nikosia", "Tirane": "Tirana", "Canary": "Kanaren", "Azores": "Azoren", "Tokyo": "Tokio",
    "Mexico_City": "Mexiko-Stadt", "Sao_Paulo": "São Paulo", "Havana": "Havanna", "Cairo": "Kairo",
    "Algiers": "Algier", "Tripoli": "Tripolis", "Tehran": "Teheran", "Riyadh": "Riad", "Baghdad": "Bagdad",
    "Damascus": "Damaskus", "Singapore": "Singapur", "Hong_Kong": "Hongkong", "Ho_Chi_Minh": "Ho-Chi-Minh-Stadt",
}
ENGLISH_NAMES: dict[str, str] = {"Sao_Paulo": "São Paulo", "Ho_Chi_Minh": "Ho Chi Minh City"}
# Words that give the zone back to the deployment's (MNEMO_TIMEZONE).
DEFAULT_WORDS = frozenset({"standard", "default", "aus", "off", "server", "zurück", "reset"})


def _key(text: str) -> str:
    """A name as it is looked up: lower case, composed umlauts, blanks and hyphens between words as one blank."""
    text = unicodedata.normalize("NFC", text).strip().lower().replace("_", " ")
    return " ".join(text.split())


def _plain(key: str) -> str:
    """A looked-up name without accents, as IANA writes it ("zürich" -> "zurich", "são paulo" -> "sao paulo")."""
    return "".join(c for c in unicodedata.normalize("NFKD", key) if not unicodedata.combining(c))


@functools.cache
def _zones() -> tuple[dict[str, str], dict[str, str]]:
    """Every IANA zone by its whole name, and by its last part ("new york"; the shorter whole name wins)."""
    whole: dict[str, str] = {}
    last: dict[str, str] = {}
    for name in sorted(available_timezones(), key=lambda z: (z.count("/") != 1, len(z), z)):
        whole[_key(name)] = name
        if not name.startswith(("Etc/", "SystemV/", "posix/", "right/")):
            last.setdefault(_key(name.rsplit("/", 1)[-1]), name)
    return whole, last


def zone_named(text: str) -> str | None:
    """The IANA zone a person means ('Europe/Berlin', 'München', 'Muenchen', 'New York', 'Tokio'); '' for the
    deployment's zone ('standard'); None when it is none that mnemo knows."""
    key = _key(text)
    if not key:
        return None
    if key in DEFAULT_WORDS:
        return ""
    umlauts = key.replace("ae", "ä").replace("oe", "ö").replace("ue", "ü")
    whole, last = _zones()
    for candidate in (key, umlauts):
        if candidate in whole or candidate in CITIES:
            return whole.get(candidate) or CITIES[candidate]
    plain = _plain(key)
    return last.get(plain) or last.get(plain.replace("-", " "))


def utc_offset(zone: ZoneInfo, at: float) -> str:
    """The zone's offset at `at` as a person reads it: 'UTC+1', 'UTC−5', 'UTC+5:30', 'UTC'."""
    minutes = round((datetime.fromtimestamp(at, UTC).astimezone(zone).utcoffset() or timedelta()).total_seconds() / 60)
    if not minutes:
        return "UTC"
    hours, rest = divmod(abs(minutes), 60)
    return f"UTC{'+' if minutes > 0 else '−'}{hours}" + (f":{rest:02d}" if rest else "")


def zone_label(zone: str, lang: str, at: float) -> str:
    """A zone as the person reads it, with its offset at `at`: 'New York (UTC−5)', German 'Tokio (UTC+9)'; only the
    offset for a zone that names no place ('UTC', 'Etc/GMT+5'). The IANA id stays for operators (logs, `mnemo
    doctor`)."""
    offset = utc_offset(ZoneInfo(zone), at)
    if "/" not in zone or zone.startswith("Etc/"):
        return offset
    place = zone.rsplit("/", 1)[-1]
    name = (GERMAN_NAMES if lang == "de" else ENGLISH_NAMES).get(place) or place.replace("_", " ")
    return f"{name} ({offset})"
