"""The user's account: /settings, /export and /deleteme, and the deleteme button."""
from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime
from zoneinfo import ZoneInfo

from bot.analysis_reports import delete_reports_about
from bot.commands.checkins import learned_hours_line
from bot.commands.invocation import Call, Pressed
from bot.commands.time_zones import zone_label, zone_named
from bot.conversation.help_lines import country_named, country_of_zone, help_country
from bot.conversation.person import person_from
from bot.conversation.tools import ForgetsScope
from bot.exchange import Button, Document, Reply
from bot.voice.recordings import exported
from bot.web_tools.toolbox import find_web_tools, used_today
from memory import Preferences, is_group_scope, parse_value
from scheduler.zone_change import change_zone

# Words a user may type in /settings, German and English, and the preference each one sets.
SETTING_KEYS = {"diary": "diary_time", "tagebuch": "diary_time", "reflection": "reflection_time",
                "nachdenken": "reflection_time", "hours": "active_hours", "stunden": "active_hours",
                "zeiten": "active_hours", "checkins": "checkins", "check-ins": "checkins",
                "nachfragen": "checkins", "morgen": "morning", "morning": "morning", "geburtstage": "date_notice",
                "birthdays": "date_notice", "ort": "place", "place": "place", "notices": "notices",
                "hinweise": "notices", "zeitzone": "timezone", "timezone": "timezone", "zone": "timezone",
                "sprache": "language", "language": "language", "land": "country", "country": "country"}
# What a person may type for a language in /settings sprache.
LANGUAGE_WORDS = {"de": "de", "deutsch": "de", "german": "de", "en": "en", "englisch": "en", "english": "en",
                  "standard": "", "default": "", "server": ""}
# Words that set another preference than the key's own: '/settings morgen täglich', '/settings morgen leer nichts'.
SETTING_WORDS = {
    ("morning", "täglich"): ("morning_days", "daily"), ("morning", "daily"): ("morning_days", "daily"),
    ("morning", "gelernt"): ("morning_days", "learned"), ("morning", "learned"): ("morning_days", "learned"),
    ("morning", "leer gruß"): ("morning_empty", "greeting"),
    ("morning", "leer gruss"): ("morning_empty", "greeting"),
    ("morning", "empty greeting"): ("morning_empty", "greeting"),
    ("morning", "leer nichts"): ("morning_empty", "nothing"),
    ("morning", "empty nothing"): ("morning_empty", "nothing"),
    ("date_notice", "vortag"): ("date_notice", "eve"), ("date_notice", "day before"): ("date_notice", "eve"),
    ("date_notice", "tag"): ("date_notice", "day"), ("date_notice", "day"): ("date_notice", "day"),
}
# What a preference's value must look like, as a text key (a wrong value is answered with it).
SETTING_EXPECTS = {"diary_push": "settings_expect_onoff", "checkins": "settings_expect_onoff",
                   "diary_time": "settings_expect_time", "reflection_time": "settings_expect_time",
                   "active_hours": "settings_expect_hours", "morning": "settings_expect_morning",
                   "date_notice": "settings_expect_dates", "place": "settings_expect_place",
                   "notices": "settings_expect_onoff", "timezone": "settings_expect_zone",
                   "language": "settings_expect_language", "country": "settings_expect_country"}
SWITCH_WORDS = ("on", "an", "off", "aus")  # '/settings diary aus', '/diary aus'


async def settings(call: Call, args: str) -> Reply:
    """/settings: the user's times and switches; /settings WORD VALUE: change one (the jobs follow)."""
    words = args.split()
    if len(words) >= 2:
        key = SETTING_KEYS.get(words[0].lower())
        value = " ".join(words[1:])
        if key == "diary_time" and value.lower() in SWITCH_WORDS:
            key = "diary_push"
        if key is None:
            return Reply((call.t("settings_usage"),))
        if key == "notices" and is_group_scope(call.scope.user_id):
            return Reply((call.t("settings_notices_private"),))
        expects = SETTING_EXPECTS[key]
        key, value = SETTING_WORDS.get((key, value.lower()), (key, value))
        if key == "timezone":
            zone = zone_named(value)
            if zone is None:
                return Reply((call.t("settings_zone_unknown", zone=value[:60]),))
            value = zone
        if key == "language":
            value = LANGUAGE_WORDS.get(value.lower(), value)
        if key == "country":
            country = country_named(value)
            if country is None:
                return Reply((call.t("settings_country_unknown", country=value[:60]),))
            value = country
        try:
            parsed = parse_value(key, value)
        except ValueError:
            return Reply((call.t("settings_bad", expected=call.t(expects)),))
        if key == "timezone":  # the learned hours and repeating reminders move with it
            await change_zone(call.store, call.scope, parsed, call.zone, call.engine.clock())
        else:
            await call.store.preferences.set(call.scope, key, parsed)
        if key == "language":  # the answer is in the language just chosen
            call = replace(call, lang=(await call.engine.person(call.scope)).lang)
        if call.scheduler is not None:
            await call.scheduler.sync_jobs()
        head = call.t("settings_saved")
    else:
        head = call.t("settings_head")
    p = await call.store.preferences.get(call.scope)
    onoff = {True: call.t("on"), False: call.t("off")}
    shown = call.t("settings_lines", diary=p.diary_time, push=onoff[p.diary_push], reflection=p.reflection_time,
                   hours=p.active_hours, checkins=onoff[p.checkins])
    rhythm = await learned_hours_line(call, p)
    web = await web_line(call)
    lines = [head, shown, zone_line(call, p), language_line(call, p), country_line(call, p), rhythm,
             morning_lines(call, p), *([web] if web else []), call.t("settings_usage")]
    return Reply(("\n".join(lines),))


def zone_line(call: Call, p: Preferences) -> str:
    """The person's time zone with the time there now, or the deployment's when they chose none."""
    at = call.engine.clock()
    if not p.timezone:
        return call.t("settings_zone_default", zone=zone_label(call.zone.key, call.lang, at))
    now = datetime.fromtimestamp(at, ZoneInfo(p.timezone))
    return call.t("settings_zone", zone=zone_label(p.timezone, call.lang, at), time=f"{now:%H:%M}")


def language_line(call: Call, p: Preferences) -> str:
    """The language mnemo speaks with the person, or the deployment's when they chose none."""
    if not p.language:
        return call.t("settings_language_default", language=call.t(f"language_{call.engine.config.language}"))
    return call.t("settings_language", language=call.t(f"language_{p.language}"))


def country_line(call: Call, p: Preferences) -> str:
    """Whose help numbers a crisis brings: the person's country, the one of their time zone, or the deployment's."""
    config = call.engine.config
    person = person_from(p, config.language, config.crisis_country)
    shown = help_country(person.country) or call.t("settings_country_world")
    if p.country:
        return call.t("settings_country", country=shown)
    by_zone = bool(p.timezone and country_of_zone(p.timezone))
    return call.t("settings_country_zone" if by_zone else "settings_country_default", country=shown)


async def web_line(call: Call) -> str:
    """Today's web searches and pages read (in the person's day), with the limit; '' when the web is off and unused."""
    box = find_web_tools(call.engine.answers.toolboxes)
    count = await used_today(call.store, call.scope, call.engine.clock(), await call.engine.zone_for(call.scope))
    if box is None and not count:
        return ""
    if box is None or not box.daily_limit:
        return call.t("settings_web_unlimited", count=count)
    return call.t("settings_web", count=count, limit=box.daily_limit)


def morning_lines(call: Call, p: Preferences) -> str:
    """The morning brief, the yearly dates, the place and the saved notices, as /settings shows them."""
    if not p.morning:
        brief = call.t("settings_morning_off")
    else:
        brief = call.t("settings_morning", time=p.morning, days=call.t(f"settings_morning_{p.morning_days}"),
                       empty=call.t(f"settings_morning_empty_{p.morning_empty}"))
    dates = call.t(f"settings_dates_{p.date_notice}")
    place = call.t("settings_place", place=p.place) if p.place else call.t("settings_place_none")
    notices = call.t("settings_notices", state=call.t("on") if p.notices else call.t("off"))
    return "\n".join([brief, dates, place, notices])


async def export_file(call: Call) -> Document:
    """Everything stored about the user as the JSON file /export sends (and the web page downloads), kept voice notes
    with their audio (base64)."""
    body = json.dumps(await exported(call.store, call.scope), ensure_ascii=False, indent=2).encode("utf-8")
    return Document("mnemo-export.json", body)


async def export(call: Call, args: str) -> Reply:
    """/export: everything stored about the user, as a JSON file."""
    return Reply((call.t("export_ready"),), document=await export_file(call))


async def deleteme(call: Call, args: str) -> Reply:
    """/deleteme: the question before everything about the user goes; in a group only the words that it works in the
    private chat (the group's memory is no one person's to delete at once)."""
    if is_group_scope(call.scope.user_id):
        return Reply((call.t("deleteme_private_only"),))
    return Reply((call.t("deleteme_confirm"),),
                 buttons=((Button(call.t("deleteme_yes"), "deleteme:yes"), Button(call.t("cancel"), "cancel")),))


async def press_deleteme(call: Call, fields: list[str]) -> Pressed | None:
    """'deleteme:yes': delete everything about the user, with the outside reports that quote them."""
    if fields != ["yes"]:
        return None
    if is_group_scope(call.scope.user_id):  # a button an older version offered in a group: nothing is deleted
        text = call.t("deleteme_private_only")
        return Pressed(text, text, stale=True)
    shared = await delete_everything(call)
    done = call.t("deleteme_done")
    if shared:
        done += "\n" + call.t("deleteme_shared_tools", servers=", ".join(shared))
    return Pressed(done, done)


async def delete_everything(call: Call) -> list[str]:
    """Delete everything about the scope (its web sessions and kept voice notes too), with the outside reports that
    quote it and its per-person MCP servers' processes and folders; the names of the shared MCP servers, whose
    keeping it cannot reach.

    Waits for a learning run in flight, so nothing it learned is written back after the deletion.
    """
    async with call.engine.learning_paused(call.scope):
        await call.store.delete_scope(call.scope)
    call.engine.incognito.forget_turns(call.scope)  # incognito stays on; the stretch's turns so far go too
    data_dir = call.store.db.path.parent
    delete_reports_about(data_dir, call.scope.user_id)  # `mnemo analyse` quoted them
    shared: list[str] = []
    for box in call.engine.answers.toolboxes:
        if isinstance(box, ForgetsScope):
            shared.extend(await box.forget(call.scope))
    return shared
