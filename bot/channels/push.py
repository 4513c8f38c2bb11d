"""The scheduler's Sender port filled with the running channels (its Writer port is bot.llm.writer)."""
from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Protocol

from bot.exchange import Button
from memory import ButtonRows, Scope, is_group_scope
from scheduler.errors import RetryLater

log = logging.getLogger(__name__)


def channel_of(user_id: str) -> str:
    """Which channel a scope's user id belongs to: 'tg:…' Telegram, '@…:…' Matrix, else the terminal."""
    if user_id.startswith("tg:"):
        return "telegram"
    if user_id.startswith("@") and ":" in user_id:
        return "matrix"
    return "console"


class Pushes(Protocol):
    """Anything that can push a text to a user (every channel, the terminal included)."""

    async def send(self, user_id: str, text: str, buttons: Sequence[Sequence[Button]] | None = None) -> None:
        """Send text (with rows of buttons under it) to the user."""
        ...


class ChannelSender:
    """The scheduler's Sender port: deliver through the channel the user talks on."""

    def __init__(self, channels: Mapping[str, Pushes]) -> None:
        self.channels = channels

    async def deliver(self, scope: Scope, text: str, *, buttons: ButtonRows = ()) -> bool:
        """Send; False (logged) when the scope is a group, the user's channel is not running or the send failed."""
        if is_group_scope(scope.user_id):
            log.warning("not sending to %s: mnemo speaks first only in private chats", scope.user_id)
            return False
        channel = self.channels.get(channel_of(scope.user_id))
        if channel is None:
            log.warning("no running channel for %s; message not sent", scope.user_id)
            return False
        try:
            if buttons:
                rows = [[Button(label, data) for label, data in row] for row in buttons]
                await channel.send(scope.user_id, text, rows)
            else:
                await channel.send(scope.user_id, text)
        except RetryLater:
            raise  # the outbox waits as long as the channel asked
        except Exception:
            log.exception("sending to %s failed", scope.user_id)
            return False
        return True
