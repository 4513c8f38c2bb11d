"""Incognito turns: answered from the memory as it is, nothing of the message kept; `/incognito`'s words (pure).

While a scope is incognito, a message is neither logged nor learnt from, counted in no rhythm, sets no reminder, and
the model's markers and tools change nothing (no web or tool server either: they log what they are asked). A yes or
no still decides an open question (the person's own act), and a crisis still gets the help lines. The stretch's own
turns are kept in this process only, for the model's coherence (a restart loses them, never the database).
"""
from __future__ import annotations

import logging
import re
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from zoneinfo import ZoneInfo

from bot.conversation.bubbles import split_bubbles
from bot.conversation.config import EngineConfig
from bot.conversation.failures import failure_text, log_words
from bot.conversation.help_first import HelpFirst
from bot.conversation.model_answer import ModelAnswers
from bot.conversation.questions import OpenQuestions
from bot.conversation.tools import ToolContext
from bot.conversation.turn import Step, Turn
from bot.errors import LLMError
from bot.exchange import Reply
from bot.texts import counted, t
from memory import Incognito, MemoryStore, Message, Scope, Stretch
from scheduler.backoff import answered_checkin
from scheduler.reminder_times import AskBack, explicit_request, parse_reminder

log = logging.getLogger(__name__)

MAX_DAYS = 7  # the longest incognito stretch asked for by a duration
OFF_WORDS = frozenset({"aus", "off", "stop", "ende", "end", "beenden"})
ON_WORDS = frozenset({"an", "ein", "on", "start"})  # '/incognito an 2h' is '/incognito 2h'
STATUS_WORDS = frozenset({"status", "?", "zustand"})
_FOR = ("für ", "for ")  # '/incognito an für 2h'
_UNITS = {"m": 60, "min": 60, "mins": 60, "minute": 60, "minuten": 60, "minutes": 60,
          "h": 3600, "std": 3600, "stunde": 3600, "stunden": 3600, "hour": 3600, "hours": 3600,
          "d": 86400, "tag": 86400, "tage": 86400, "day": 86400, "days": 86400}
_DURATION = re.compile(r"(\d{1,4})\s*([a-z]+)")
_TOMORROW = frozenset({"bis morgen", "until tomorrow", "morgen", "tomorrow"})


@dataclass(frozen=True)
class Switch:
    """What `/incognito …` asks for: on (until a time, or None: until switched off), off, or (on None) only whether it
    is on."""

    on: bool | None
    until: float | None = None


def parse_switch(args: str, now: datetime) -> Switch | None:
    """`/incognito`'s words at the local time `now`: '' or 'an'/'on' on until off, '2h', '30 min', '1 Tag', 'bis morgen'
    (local midnight), each maybe after 'an'; 'aus'/'off'; 'status'; None for anything else or more than MAX_DAYS."""
    words = " ".join(args.lower().split())
    if words in STATUS_WORDS:
        return Switch(None)
    if words in OFF_WORDS:
        return Switch(False)
    first, _, rest = words.partition(" ")
    if first in ON_WORDS:
        words = rest.removeprefix(_FOR[0]).removeprefix(_FOR[1])
    if not words:
        return Switch(True)
    if words in _TOMORROW:
        midnight = datetime.combine(now.date() + timedelta(days=1), datetime.min.time(), now.tzinfo)
        return Switch(True, midnight.timestamp())
    match = _DURATION.fullmatch(words)
    if match is None or match.group(2) not in _UNITS:
        return None
    seconds = int(match.group(1)) * _UNITS[match.group(2)]
    if not 0 < seconds <= MAX_DAYS * 86400:
        return None
    return Switch(True, now.timestamp() + seconds)


def until_words(until: float | None, zone: ZoneInfo, lang: str, now: float) -> str:
    """When a stretch ends, as the person reads it ('14:30', '03.12. 14:30')."""
    if until is None:
        return t(lang, "incognito_forever")
    end, today = datetime.fromtimestamp(until, zone), datetime.fromtimestamp(now, zone)
    return end.strftime("%H:%M") if end.date() == today.date() else end.strftime("%d.%m. %H:%M")


class IncognitoTurns:
    """Answers a scope's messages while it is incognito, and keeps that stretch's turns in process memory only."""

    def __init__(self, store: MemoryStore, config: EngineConfig, clock: Callable[[], float], answers: ModelAnswers,
                 questions: OpenQuestions, zone_for: Callable[[Scope], Awaitable[ZoneInfo]],
                 help: HelpFirst) -> None:
        self.store, self.config, self.clock, self.answers = store, config, clock, answers
        self.questions, self.zone_for = questions, zone_for
        self.help = help  # the engine's: the help text at once (with the crisis mark), the judge, the answer
        self._turns: dict[int, deque[Message]] = {}  # a stretch's own turns per scope: never written anywhere

    async def switch_on(self, scope: Scope, until: float | None) -> Incognito:
        """Switch incognito on (a stretch that is on only gets its new end)."""
        return await self.store.incognito.start(scope, self.clock(), until)

    async def switch_off(self, scope: Scope, ended_by: str = "command") -> Stretch | None:
        """Switch incognito off and forget the stretch's turns; None when it was not on."""
        self._turns.pop(scope.id, None)
        return await self.store.incognito.end(scope, self.clock(), ended_by)

    def forget_turns(self, scope: Scope) -> None:
        """Forget the stretch's turns kept so far (/deleteme), incognito staying on."""
        self._turns.pop(scope.id, None)

    async def turn(self, turn: Turn, checks: Sequence[Step]) -> Reply | None:
        """Answer the message in incognito, or None (passes on) when the scope is not incognito.

        When the stretch's time ran out, it ends here and the message goes on to be stored, its reply opened by a
        sentence saying so. `checks` are the engine's steps before logging (voice note, rate limit, picture).
        """
        on = await self.store.incognito.current(turn.scope)
        if on is None:
            self._turns.pop(turn.scope.id, None)  # switched off elsewhere (another worker): the stretch's turns go too
            return None
        now = self.clock()
        if on.over(now):
            stretch = await self.switch_off(turn.scope, "time")
            assert stretch is not None  # it was on a moment ago
            until = until_words(stretch.ended_at, await self.zone_for(turn.scope), turn.lang, now)
            lang = turn.lang
            turn.preface.append(t(lang, "incognito_ended_by_time", until=until,
                                  messages=counted(lang, stretch.messages, "messages")))
            return None
        await self.store.inbox.empty_log_when_handled()  # the update's payload leaves the files once handled
        for check in checks:
            reply = await check(turn)
            if reply is not None:
                return reply
        await self.store.incognito.count(turn.scope, now)
        # the planner sees that the person talks, and which check-in they answered: a number and times only
        answered = answered_checkin(await self.store.messages.checkin_times(turn.scope, 1), now)
        await self.store.incognito.note(turn.scope, now, answered)
        reply = await self._answer(turn)
        if not reply.failed:
            self._remember(turn.scope, turn.incoming.text, "\n\n".join(reply.bubbles), now)
        return reply

    async def _answer(self, turn: Turn) -> Reply:
        """The crisis answer, a decided question, a refused reminder, or the model's read-only answer."""
        lang, scope = turn.lang, turn.scope
        await self.help.judged(turn)  # a close call the judge was asked about (MNEMO_CRISIS_JUDGE)
        if turn.crisis:
            return await self.help.answer(turn, self._write)  # the help text went out before the checks
        if not turn.brings_file:
            decided = await self.questions.answer(turn)  # deciding a question is the person's own act
            if decided is not None:
                return decided
        zone = await self.zone_for(scope)
        if asks_for_reminder(turn.incoming.text, datetime.fromtimestamp(self.clock(), zone), zone):
            return Reply((t(lang, "incognito_no_reminder"),))
        try:
            text = await self._write(turn)
        except LLMError as exc:
            log.warning("chat model failed for a message in incognito: %s", log_words(exc))
            return Reply((t(lang, failure_text(exc)),), failed=True)
        if turn.crisis:  # the model flagged it ([CRISIS: …]): the help text went out first
            return self.help.careful(turn, text)
        return Reply(split_bubbles(text) or (t(lang, "empty"),))

    async def _write(self, turn: Turn) -> str:
        """The model's answer from the memory as it is, with the stretch's own turns; tools that change nothing."""
        scope = turn.scope
        tools = ToolContext(self.store, scope, await self.zone_for(scope), _no_rule, current_id=1 << 62,
                            clock=self.clock, crisis=turn.crisis, flag_crisis=partial(self._flagged, turn))
        earlier = list(self._turns.get(scope.id, ()))
        last = await self.store.messages.last_user_message(scope)
        times = [m.created_at.timestamp() for m in earlier if m.role == "user"] + (
            [last.created_at.timestamp()] if last is not None else [])
        images = (turn.picture,) if turn.picture is not None else ()
        return await self.answers.write(tools, turn.incoming.text, max(times, default=None), tuple(turn.hints),
                                        turn.on_progress, turn.incoming.quoted, images, private=earlier)

    async def _flagged(self, turn: Turn) -> None:
        """The chat model flagged the message ([CRISIS: …]): the help text now, and the crisis mark (a time, no
        words)."""
        turn.crisis = True
        await self.help.send(turn)

    def _remember(self, scope: Scope, text: str, reply: str, now: float) -> None:
        """Keep the turn for the next incognito message's context (this process only)."""
        kept = self._turns.setdefault(scope.id, deque(maxlen=max(2, self.config.recent_messages)))
        at = datetime.fromtimestamp(now, UTC)
        kept.extend((Message(0, "user", text, at), Message(0, "assistant", reply, at)))


def asks_for_reminder(text: str, now: datetime, zone: ZoneInfo) -> bool:
    """Whether the message asks for a reminder (which incognito does not set: it would keep the text)."""
    parsed = parse_reminder(text, now, zone)
    return parsed is not None and (not isinstance(parsed, AskBack) or explicit_request(text))


async def _no_rule(text: str) -> str:
    """No rule is proposed in incognito."""
    return "error: no rule can be proposed in incognito"


__all__ = ["IncognitoTurns", "Switch", "asks_for_reminder", "parse_switch", "until_words"]
