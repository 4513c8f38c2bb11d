"""Where a person finds help in a crisis, by country (pure): the help text in their language, for themselves or for
someone they know; which country a name, a code or a time zone means; which language a messenger's code means.

Each number's public source is named in docs/user-guide.md (Safety). A country without numbers of its own gets
findahelpline.com and the local emergency number.
"""
from __future__ import annotations

import functools
import importlib.resources
import unicodedata
from pathlib import Path

from bot.texts import t

# Emergency numbers per country, the first the one to call first. The crisis lines themselves are texts
# (bot/texts/help_lines.py: `help_at_XX`), since their words differ by language.
EMERGENCY: dict[str, tuple[str, ...]] = {
    "DE": ("112",), "AT": ("144", "112"), "CH": ("144", "112"), "GB": ("999", "112"), "IE": ("112", "999"),
    "US": ("911",), "CA": ("911",), "AU": ("000",), "NL": ("112",), "FR": ("112", "15"),
}
HELP_COUNTRIES = tuple(EMERGENCY)  # the countries with help numbers of their own
LANGUAGES = ("de", "en")  # what mnemo speaks

# What a person may type for a country in /settings land (lower case, umlauts as typed or written out); ISO codes
# are taken as they are.
COUNTRY_NAMES: dict[str, str] = {
    "deutschland": "DE", "germany": "DE", "österreich": "AT", "oesterreich": "AT", "austria": "AT",
    "schweiz": "CH", "switzerland": "CH", "suisse": "CH", "uk": "GB", "vereinigtes königreich": "GB",
    "united kingdom": "GB", "großbritannien": "GB", "grossbritannien": "GB", "great britain": "GB", "britain": "GB",
    "england": "GB", "schottland": "GB", "scotland": "GB", "wales": "GB", "nordirland": "GB",
    "northern ireland": "GB", "irland": "IE", "ireland": "IE", "usa": "US", "us": "US", "vereinigte staaten": "US",
    "united states": "US", "amerika": "US", "america": "US", "kanada": "CA", "canada": "CA", "australien": "AU",
    "australia": "AU", "niederlande": "NL", "netherlands": "NL", "holland": "NL", "nederland": "NL",
    "frankreich": "FR", "france": "FR", "italien": "IT", "italy": "IT", "spanien": "ES", "spain": "ES",
    "belgien": "BE", "belgium": "BE", "luxemburg": "LU", "luxembourg": "LU", "dänemark": "DK", "denmark": "DK",
    "schweden": "SE", "sweden": "SE", "norwegen": "NO", "norway": "NO", "polen": "PL", "poland": "PL",
    "tschechien": "CZ", "czechia": "CZ", "portugal": "PT", "griechenland": "GR", "greece": "GR",
    "neuseeland": "NZ", "new zealand": "NZ", "liechtenstein": "LI",
}
# The supported countries' time zones; any other zone is looked up in the time zone database's zone.tab.
ZONE_COUNTRIES: dict[str, str] = {
    "Europe/Berlin": "DE", "Europe/Busingen": "DE", "Europe/Vienna": "AT", "Europe/Zurich": "CH",
    "Europe/London": "GB", "Europe/Belfast": "GB", "Europe/Dublin": "IE", "Europe/Amsterdam": "NL",
    "Europe/Paris": "FR", "America/New_York": "US", "America/Chicago": "US", "America/Denver": "US",
    "America/Phoenix": "US", "America/Los_Angeles": "US", "America/Anchorage": "US", "America/Detroit": "US",
    "America/Boise": "US", "Pacific/Honolulu": "US", "America/Toronto": "CA", "America/Montreal": "CA",
    "America/Vancouver": "CA", "America/Edmonton": "CA", "America/Winnipeg": "CA", "America/Regina": "CA",
    "America/Halifax": "CA", "America/St_Johns": "CA", "America/Moncton": "CA", "America/Whitehorse": "CA",
    "America/Yellowknife": "CA", "America/Iqaluit": "CA",
}
_ZONE_PREFIXES = {"America/Indiana/": "US", "America/Kentucky/": "US", "America/North_Dakota/": "US",
                  "Australia/": "AU", "US/": "US", "Canada/": "CA"}


def help_country(country: str) -> str:
    """The country whose numbers the help text gives: the country itself when mnemo knows its numbers, else ''
    (findahelpline.com and the local emergency number)."""
    code = country.strip().upper()
    return code if code in EMERGENCY else ""


def _emergency(country: str, lang: str) -> str:
    """The emergency numbers to call, 'a or b' in the language; the local one where the country has none here."""
    numbers = EMERGENCY.get(country)
    if not numbers:
        return t(lang, "help_emergency_local")
    return f" {t(lang, 'help_or')} ".join(numbers)


def _services(country: str, lang: str) -> str:
    """Who answers in the country (the international finder where it has none here)."""
    return t(lang, f"help_at_{country}" if country else "help_at_world")


def crisis_help(country: str, lang: str) -> str:
    """The help text for a person in crisis: the country's crisis lines and emergency number, in their language
    (findahelpline.com and the local emergency number for a country without numbers here)."""
    code = help_country(country)
    return t(lang, "crisis_help", services=_services(code, lang), emergency=_emergency(code, lang))


def crisis_help_other(country: str, lang: str) -> str:
    """The same numbers, worded for someone whose words show that a person they know is in danger (a forwarded
    message, someone else's words)."""
    code = help_country(country)
    return t(lang, "crisis_help_other", services=_services(code, lang), emergency=_emergency(code, lang))


def _key(text: str) -> str:
    """A name as it is looked up: composed umlauts, lower case, one blank between words."""
    return " ".join(unicodedata.normalize("NFC", text).strip().lower().replace(".", "").split())


def country_named(text: str) -> str | None:
    """The ISO code a person means by a country's name or code ('Österreich', 'UK', 'us', 'FR'); '' for the
    operator's default ('standard'); None when it is no country mnemo knows."""
    key = _key(text)
    if key in ("standard", "default", "aus", "off", "server", "zurück", "reset"):
        return ""
    if key in COUNTRY_NAMES:
        return COUNTRY_NAMES[key]
    code = key.upper()
    return code if len(code) == 2 and code.isascii() and code.isalpha() and code in _iso_codes() else None


def country_of_zone(zone: str) -> str | None:
    """The country of an IANA time zone ('Europe/Vienna' -> 'AT'); None when the zone names none (UTC, Etc/…)."""
    if zone in ZONE_COUNTRIES:
        return ZONE_COUNTRIES[zone]
    for prefix, country in _ZONE_PREFIXES.items():
        if zone.startswith(prefix):
            return country
    return _zone_table().get(zone)


def language_of_code(code: str | None) -> str | None:
    """The language mnemo speaks for a messenger's language code ('en-US' -> 'en', 'de-AT' -> 'de'); None for any
    other (or none): then the operator's."""
    head = (code or "").strip().lower().replace("_", "-").split("-")[0]
    return head if head in LANGUAGES else None


def _table(name: str) -> list[list[str]]:
    """The rows of a table of the time zone database (tzdata's, else the system's), without comments; [] if none."""
    try:
        text = (importlib.resources.files("tzdata") / "zoneinfo" / name).read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError, OSError):
        path = Path("/usr/share/zoneinfo") / name
        text = path.read_text(encoding="utf-8") if path.is_file() else ""
    return [line.split("\t") for line in text.splitlines() if line and not line.startswith("#")]


@functools.cache
def _zone_table() -> dict[str, str]:
    """Every zone of zone.tab with its country."""
    return {row[2]: row[0] for row in _table("zone.tab") if len(row) >= 3}


@functools.cache
def _iso_codes() -> frozenset[str]:
    """The ISO 3166 country codes (iso3166.tab; the supported ones and the named ones when it is missing)."""
    codes = {row[0] for row in _table("iso3166.tab") if row}
    return frozenset(codes | set(EMERGENCY) | set(COUNTRY_NAMES.values()))


def without_help(text: str, country: str, lang: str) -> str:
    """A crisis answer without the help text, for the person's or for someone they know, that the model repeated (the
    program sent it first)."""
    for notice in (crisis_help(country, lang), crisis_help_other(country, lang)):
        text = text.replace(notice, "")
    return text.strip()


def help_text_for(forwarded: bool, country: str, lang: str) -> str:
    """The help text a message brings: for someone the person knows when the words were forwarded, else for them."""
    return crisis_help_other(country, lang) if forwarded else crisis_help(country, lang)
