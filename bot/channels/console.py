"""The terminal channel: a console chat through the full pipeline, the default when no messenger is set.

It answers a line as every channel does (`base.answer`: the command when it is one, else the engine), with no
typing notice, preview or replay.

The terminal has no buttons: a reply's choices are shown as numbered lines under it, and a number typed as
the next input picks one, as a button press would. The open choice is kept in `store.choices`, so it still
counts after a restart; any other input moves on and drops it.
"""
from __future__ import annotations

import asyncio
import logging
import re
import sys
import uuid
from collections.abc import Sequence
from typing import TextIO

from bot.channels.base import after_press, answer
from bot.commands.invocation import Pressed
from bot.commands.runner import Commands
from bot.conversation.engine import Engine
from bot.exchange import Button, Incoming, Reply, question_of
from bot.texts import t
from memory import Choice, Scope

log = logging.getLogger(__name__)

CONSOLE_USER = "console:local"
_NUMBER = re.compile(r"\s*([0-9]{1,3})\s*[.)]?\s*", re.ASCII)


def number_picked(text: str) -> int | None:
    """The number a line picks ('2', ' 2. ', '2)'); None when the line is something else."""
    found = _NUMBER.fullmatch(text)
    return int(found.group(1)) if found else None


def numbered(buttons: Sequence[Sequence[Button]]) -> list[Button]:
    """The buttons in the order they are numbered, from 1."""
    return [button for row in buttons for button in row]


class ConsoleChannel:
    """Reads lines from a stream, answers through the engine and the commands, prints the bubbles."""

    name = "console"

    def __init__(
        self, engine: Engine, *, stdin: TextIO | None = None, stdout: TextIO | None = None,
        user_id: str = CONSOLE_USER, commands: Commands | None = None,
    ) -> None:
        self.engine = engine
        self.choices = engine.store.choices
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stdout
        self.user_id = user_id
        self.commands = commands
        self.finished = asyncio.Event()

    def _print(self, text: str) -> None:
        self.stdout.write(text + "\n")
        self.stdout.flush()

    async def send(self, user_id: str, text: str, buttons: Sequence[Sequence[Button]] | None = None) -> None:
        """Show a message the companion sends on its own, its choices numbered."""
        await self._show(Reply((text,), buttons=tuple(tuple(row) for row in buttons or ())))

    async def run(self) -> None:
        """Chat until end of input."""
        config = self.engine.config
        self._print(t(config.language, "console_hello", name=config.companion_name))
        while True:
            self.stdout.write("> ")
            self.stdout.flush()
            line = await asyncio.to_thread(self.stdin.readline)
            if not line:
                break
            text = line.rstrip("\n")
            if text.strip():
                await self._take(text)
        self.finished.set()

    async def _take(self, text: str) -> None:
        """Answer one line: a number picks from the open choice; anything else drops it and is answered."""
        scope = await self.engine.scope_for(self.user_id)
        choice = await self.choices.latest(scope, self.name)
        if choice is not None and self.commands is not None:
            number = number_picked(text)
            if number is not None:
                await self._choose(choice, number)
                return
            await self._drop_choices(scope)
        reply, _ = await answer(self.engine, self.commands, Incoming(self.user_id, text, channel=self.name),
                                command=text.startswith("/"), say_now=self._say_now)
        if reply is not None:
            if reply.reaction:
                config = self.engine.config
                self._print(t(config.language, "console_reaction", name=config.companion_name, emoji=reply.reaction))
            await self._show(reply)

    async def _choose(self, choice: Choice, number: int) -> None:
        """Act on the option with this number, as a press of its button; a number not offered changes nothing."""
        assert self.commands is not None  # choices are only offered with commands at hand
        data = choice.options.get(str(number))
        if data is None:
            self._print(self._line(t(self.engine.config.language, "choice_out_of_range", last=len(choice.options))))
            return
        await self.choices.close(self.name, choice.message_ref)
        await self._show_pressed(await self.commands.press(self.user_id, data))

    async def _show_pressed(self, pressed: Pressed) -> None:
        """Show what a pick did: a new text (with its own choices, like the next page), else the notice."""
        shows = after_press(pressed)
        if isinstance(shows, Reply):
            await self._show(shows)
        elif shows:
            self._print(self._line(shows))

    async def _say_now(self, text: str) -> None:
        """Print a text at once, before the reply (the help text in a crisis)."""
        self._print(self._line(text))

    async def _show(self, reply: Reply) -> None:
        """Print a reply's bubbles, then its choices as numbered lines (recorded, to be picked by number)."""
        for bubble in reply.bubbles:
            self._print(self._line(bubble))
        options = numbered(reply.buttons) if self.commands is not None else []
        if not options:
            return
        lines = [t(self.engine.config.language, "choose_number")]
        lines += [f"  {n}) {button.label}" for n, button in enumerate(options, 1)]
        self._print("\n".join(lines))
        scope = await self.engine.scope_for(self.user_id)
        await self._drop_choices(scope)
        picks = {str(n): button.data for n, button in enumerate(options, 1)}
        await self.choices.record(scope, self.name, uuid.uuid4().hex, picks, owner=self.user_id,
                                  question=question_of(reply.buttons), now=self.engine.clock())

    async def _drop_choices(self, scope: Scope) -> None:
        """Close the open choices: the person moved on (only the newest is ever shown as open)."""
        while (choice := await self.choices.latest(scope, self.name)) is not None:
            await self.choices.close(self.name, choice.message_ref)

    def _line(self, text: str) -> str:
        return f"{self.engine.config.companion_name}: {text}"
