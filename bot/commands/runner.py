"""Runs a command or a button press for a user, once: within the user's own scope, recorded against a replay."""
from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from bot.commands.catalog import BUTTONS, BY_NAME, changes_memory, changes_something, parse_command
from bot.commands.invocation import Call, Pressed
from bot.commands.web_links import WebLinks
from bot.conversation.engine import Engine
from bot.conversation.turn import check_input
from bot.exchange import Button, Reply, well_formed
from bot.texts import t
from memory import CommandRun, NotFound, Scope, is_group_scope
from scheduler.service import Scheduler

log = logging.getLogger(__name__)


def reply_record(reply: Reply) -> dict[str, Any]:
    """A reply as JSON-ready data, to deliver it again after a crash (a document is never kept)."""
    return {"bubbles": list(reply.bubbles), "buttons": _rows_record(reply.buttons), "failed": reply.failed,
            "closes": list(reply.closes)}


def reply_from(record: dict[str, Any]) -> Reply:
    """The reply recorded by `reply_record`."""
    return Reply(tuple(record["bubbles"]), buttons=_rows_from(record["buttons"]), failed=record["failed"],
                 closes=tuple(record["closes"]))


def _pressed_record(pressed: Pressed) -> dict[str, Any]:
    return {"notice": pressed.notice, "text": pressed.text, "buttons": _rows_record(pressed.buttons),
            "closes": list(pressed.closes), "stale": pressed.stale}


def _pressed_from(record: dict[str, Any]) -> Pressed:
    return Pressed(record["notice"], record["text"], _rows_from(record["buttons"]), tuple(record["closes"]),
                   record["stale"])


def _rows_record(rows: Sequence[Sequence[Button]]) -> list[list[list[str]]]:
    return [[[b.label, b.data] for b in row] for row in rows]


def _rows_from(rows: list[list[list[str]]]) -> tuple[tuple[Button, ...], ...]:
    return tuple(tuple(Button(label, data) for label, data in row) for row in rows)


class Commands:
    """Runs commands and button presses for a user, always within that user's own scope."""

    def __init__(self, engine: Engine, scheduler: Scheduler | None = None) -> None:
        self.engine = engine
        self.scheduler = scheduler
        self.store = engine.store
        self.lang = engine.config.language
        self.web: WebLinks | None = None  # set when the web page runs: /web sends a login link

    def _t(self, key: str, **values: object) -> str:
        return t(self.lang, key, **values)

    async def _call(self, scope: Scope) -> Call:
        """A command's or press's call in the scope, in the person's language."""
        return Call(self.engine, self.scheduler, scope, (await self.engine.person(scope)).lang, self.web)

    async def run(self, user_id: str, text: str, *, channel: str = "", ref: str | None = None,
                  admin: bool = True, sent_at: float | None = None) -> Reply | None:
        """Answer a command; None when the text is not a command at all.

        In a group scope, `admin` says whether the person who wrote is one of the group's admins; a command
        declared for admins only is refused to anyone else. With `ref` (the channel's id of the message), the
        command runs once: it is recorded before it runs and its reply after, so a replay of the message delivers
        that reply again (nothing, once delivered). A command that changes something and was cut off by a crash
        is not run again; the user gets one sentence instead.
        """
        parsed = parse_command(text)
        if parsed is None:
            return None
        name, args = parsed
        refused = self._refused(user_id, name, text, admin)
        if refused is not None:
            return refused
        scope = await self.engine.scope_for(user_id)
        earlier = (await self.store.runs.begin(scope, channel, ref, self.engine.clock()) if ref is not None
                   else None)
        if earlier is not None:
            replayed = await self._replayed(scope, channel, ref, earlier, changes_something(name, args))
            if replayed is not None:
                return replayed
        elif (verdict := self.engine.limiter.check(user_id, sent_at)) != "pass":  # counted like messages, replays not
            return Reply((self._t("rate_limited"),) if verdict == "tell" else (), failed=True)
        reply = await BY_NAME[name].handler(await self._call(scope), args)
        if ref is not None and changes_something(name, args):
            await self.store.runs.answer(scope, channel, ref, reply_record(reply))
        return reply

    def _refused(self, user_id: str, name: str, text: str, admin: bool) -> Reply | None:
        """Why a command is not run: unknown, not for this member of a group, or a text too long (None: run it)."""
        command = BY_NAME.get(name)
        if command is None:
            return Reply((self._t("unknown_command"),))
        if is_group_scope(user_id) and not admin and command.in_group == "admins":
            log.info("command /%s in %s by a member who is no admin: refused", name, user_id)
            return Reply((self._t("group_admins_only"),))
        limit = self.engine.config.max_message_chars
        problem = check_input(text, limit)
        if problem:
            return Reply((self._t(problem, size=len(text), limit=limit),), failed=True)
        return None

    async def _replayed(self, scope: Scope, channel: str, ref: str | None, earlier: CommandRun,
                        changing: bool) -> Reply | None:
        """What a replayed command shows: its recorded reply, nothing, or why it does not run again (None: run it)."""
        assert ref is not None  # only a command with a channel id has an earlier run
        if earlier.reply is not None:
            return reply_from(earlier.reply)
        if earlier.state == "delivered":
            return Reply(())
        if not changing:
            return None
        log.warning("command %s in %s was cut off by a restart; not run again", ref, channel)
        reply = Reply((self._t("command_interrupted"),))
        await self.store.runs.answer(scope, channel, ref, reply_record(reply))
        return reply

    async def delivered(self, user_id: str, channel: str, ref: str) -> None:
        """Note that the answer to a command or press (by its `ref`) was delivered, so its recorded reply goes."""
        await self.store.runs.delivered(await self.engine.scope_for(user_id), channel, ref)

    async def press(self, user_id: str, data: str, *, admin: bool = True, channel: str = "",
                    ref: str | None = None) -> Pressed:
        """Act on a button's data in the scope of `user_id`; forged or stale data changes nothing.

        In a group scope, `admin` says whether the person who pressed is one of the group's admins:
        only they may change the group's memory (paging and showing are open to every member).
        With `ref` (the channel's id of the press), a replayed press answers what it answered before;
        one cut off by a crash runs again, which every button allows (each checks what it acts on first).
        """
        if not well_formed(data):
            log.info("malformed button data %r from %s", data[:80], user_id)
            return Pressed(self._t("button_unknown"))
        if is_group_scope(user_id) and not admin and changes_memory(data):
            log.info("press %r in %s by a member who is no admin: refused", data, user_id)
            return Pressed(self._t("group_admins_only"))
        scope = await self.engine.scope_for(user_id)
        earlier = (await self.store.runs.begin(scope, channel, ref, self.engine.clock()) if ref is not None
                   else None)
        if earlier is not None and earlier.reply is not None:
            return _pressed_from(earlier.reply)
        if earlier is not None and earlier.state == "delivered":
            return Pressed("")
        pressed = await self._press(scope, data)
        if ref is not None:
            await self.store.runs.answer(scope, channel, ref, _pressed_record(pressed))
        return pressed

    async def _press(self, scope: Scope, data: str) -> Pressed:
        """Hand well-formed button data to the handler of its kind, within the scope."""
        prefix, *fields = data.split(":")
        kind = BUTTONS.get(prefix)
        try:
            pressed = await kind.handler(await self._call(scope), fields) if kind is not None else None
        except NotFound:
            log.info("button %r from %s names nothing in their scope", data, scope.user_id)
            return Pressed(self._t("button_unknown"), stale=True)
        if pressed is None:
            log.info("unrecognised button data %r from %s", data, scope.user_id)
            return Pressed(self._t("button_unknown"))
        return pressed
