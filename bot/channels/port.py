"""The Messenger port: what the scheduler and the app need from every channel."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from bot.exchange import Button


class Messenger(Protocol):
    """A chat channel (Telegram, Matrix, the terminal)."""

    @property
    def name(self) -> str:
        """The channel's name in settings and logs ("telegram", "matrix", "console")."""
        ...

    async def start(self) -> None:
        """Connect and begin receiving messages (returns once running)."""
        ...

    async def stop(self) -> None:
        """Stop receiving and disconnect."""
        ...

    async def send(self, user_id: str, text: str, buttons: Sequence[Sequence[Button]] | None = None) -> None:
        """Push a message to a user on this channel (proactive messages, diary entries)."""
        ...
