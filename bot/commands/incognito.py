"""/incognito [an] [2h | 30 min | bis morgen], /incognito aus and /incognito status: talk without being remembered,
for a while."""
from __future__ import annotations

from datetime import datetime

from bot.commands.invocation import Call
from bot.conversation.incognito_turns import parse_switch, until_words
from bot.exchange import Reply
from bot.texts import counted


async def incognito(call: Call, args: str) -> Reply:
    """/incognito (or 'an'): on until /incognito aus, or for a time ('2h', '30 min', 'bis morgen'); /incognito aus: off;
    /incognito status: whether it is on."""
    engine, now = call.engine, call.engine.clock()
    zone = await engine.zone_for(call.scope)
    switch = parse_switch(args, datetime.fromtimestamp(now, zone))
    if switch is None:
        return Reply((call.t("incognito_usage"),))
    if switch.on is None:
        current = await engine.store.incognito.current(call.scope)
        if current is None:
            return Reply((call.t("incognito_status_off"),))
        until = until_words(current.until, zone, call.lang, now)
        if current.until is not None:
            until = call.t("incognito_until", until=until)
        return Reply((call.t("incognito_status_on", until=until,
                             messages=counted(call.lang, current.messages, "messages")),))
    if not switch.on:
        stretch = await engine.incognito.switch_off(call.scope)
        if stretch is None:
            return Reply((call.t("incognito_not_on"),))
        return Reply((call.t("incognito_off", messages=counted(call.lang, stretch.messages, "messages")),))
    on = await engine.incognito.switch_on(call.scope, switch.until)
    if on.until is None:
        return Reply((call.t("incognito_on"),))
    return Reply((call.t("incognito_on_until", until=until_words(on.until, zone, call.lang, now)),))
