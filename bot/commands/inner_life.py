"""The companion's inner life: /diary, /thoughts, /topics, /relationship, and /think and /writediary on demand."""
from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from bot.commands import account
from bot.commands.invocation import Call
from bot.commands.relationship_view import show
from bot.errors import LLMBadOutput, LLMError
from bot.exchange import Reply
from memory import DiaryEntry, Scope
from scheduler.errors import BadModelOutput
from scheduler.reflection import Reflection
from scheduler.relationship_rules import wish_of
from scheduler.service import Scheduler

log = logging.getLogger(__name__)

T = TypeVar("T")


async def diary(call: Call, args: str) -> Reply:
    """/diary: the latest entry; /diary 3: the latest three; /diary an|aus: the diary pushed or not."""
    if args.lower() in account.SWITCH_WORDS:
        return await account.settings(call, f"diary {args}")
    count = max(1, min(10, int(args))) if args.isdigit() else 1
    entries = await call.store.diary.latest(call.scope, count)
    if not entries:
        return Reply((call.t("diary_empty"),))
    return Reply(tuple(f"📔 {e.day}\n{e.text}" for e in reversed(entries))[-3:])


async def thoughts(call: Call, args: str) -> Reply:
    """/thoughts: the latest five thoughts of the reflections."""
    found = await call.store.thoughts.latest(call.scope, 5)
    if not found:
        return Reply((call.t("thoughts_empty"),))
    return _thoughts_shown(call, [th.text for th in found])


async def topics(call: Call, args: str) -> Reply:
    """/topics: the open topics, with when each is due."""
    found = await call.store.topics.list(call.scope)
    if not found:
        return Reply((call.t("topics_empty"),))
    zone = await call.engine.zone_for(call.scope)  # the person's own, else the deployment's
    lines = [call.t("topics_head")] + [
        f"• {tp.text}" + (f" ({tp.due_at.astimezone(zone):%d.%m. %H:%M})" if tp.due_at else "")
        for tp in found
    ]
    return Reply(("\n".join(lines),))


async def relationship(call: Call, args: str) -> Reply:
    """/relationship: where the two stand, and the latest changes with their reasons."""
    state = await call.store.relationships.get(call.scope)
    wish = wish_of(await call.store.companions.get(call.scope.companion_id))
    history = await call.store.relationships.history(call.scope, 6)
    return Reply((show(call.lang, state, wish, history, await call.engine.zone_for(call.scope)),))


def failure_key(exc: BaseException, job: str) -> str:
    """The text key that says truly why /think or /writediary (job 'think' or 'diary') failed."""
    if isinstance(exc, (BadModelOutput, LLMBadOutput)):
        return f"{job}_unusable"
    if isinstance(exc, LLMError):
        return "job_failed"
    return "job_error"


async def _on_demand(call: Call, job: str, work: Callable[[Scheduler, Scope], Awaitable[T]],
                     shown: Callable[[Call, T], Reply]) -> Reply:
    """Run a night's job now (job 'think' or 'diary') and show what it made, or say truly why it failed."""
    if call.scheduler is None:
        return Reply((call.t("not_yet"),))
    try:
        made = await work(call.scheduler, call.scope)
    except Exception as exc:
        log.exception("%s on demand failed", "reflection" if job == "think" else "diary")
        return Reply((call.t(failure_key(exc, job)),))
    return shown(call, made)


def _thoughts_shown(call: Call, texts: list[str]) -> Reply:
    return Reply(("\n".join([call.t("thoughts_head")] + [f"• {text}" for text in texts]),))


def _reflection_shown(call: Call, reflection: Reflection | None) -> Reply:
    if reflection is None or not reflection.thoughts:
        return Reply((call.t("think_nothing"),))
    return _thoughts_shown(call, [th.text for th in reflection.thoughts])


def _entry_shown(call: Call, entry: DiaryEntry | None) -> Reply:
    return Reply((call.t("diary_nothing"),) if entry is None else (f"📔 {entry.day}\n{entry.text}",))


async def think(call: Call, args: str) -> Reply:
    """/think: reflect now, even when nothing new was said, and show the thoughts."""
    return await _on_demand(call, "think", Scheduler.reflect_now, _reflection_shown)


async def writediary(call: Call, args: str) -> Reply:
    """/writediary: write today's diary entry now and show it."""
    return await _on_demand(call, "diary", Scheduler.write_diary_now, _entry_shown)
