"""The terminal channel: a console chat through the full pipeline, the default when no messenger is set."""
from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Awaitable, Callable
from typing import TextIO

from bot.engine import Engine, Incoming, Reply
from bot.texts import t

log = logging.getLogger(__name__)

CONSOLE_USER = "console:local"


class ConsoleChannel:
    """Reads lines from a stream, answers through the engine, prints the bubbles."""

    name = "console"

    def __init__(
        self, engine: Engine, *, stdin: TextIO | None = None, stdout: TextIO | None = None,
        user_id: str = CONSOLE_USER, commands: Callable[[str, str], Awaitable[Reply | None]] | None = None,
    ) -> None:
        self.engine = engine
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stdout
        self.user_id = user_id
        self.commands = commands
        self.finished = asyncio.Event()

    def _print(self, text: str) -> None:
        self.stdout.write(text + "\n")
        self.stdout.flush()

    async def send(self, user_id: str, text: str, buttons: object = None) -> None:
        """Show a message the companion sends on its own."""
        self._print(f"{self.engine.config.companion_name}: {text}")

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
            if not text.strip():
                continue
            reply = None
            if text.startswith("/") and self.commands is not None:
                reply = await self.commands(self.user_id, text)
            if reply is None:
                reply = await self.engine.handle(Incoming(self.user_id, text, channel=self.name))
            for bubble in reply.bubbles if reply else ():
                self._print(f"{config.companion_name}: {bubble}")
        self.finished.set()
