"""Encrypted Matrix events whose key has not reached the bot yet: kept, asked for, tried again, given up.

A megolm key travels beside the message, as a to-device message of the sender's client, and may come
late (or, when a client fails, never). Such an event stays unhandled in the inbox (still encrypted); the
bot asks its own other devices (nio's key request) and the sender's device for the key, and tries to
decrypt it again after every sync. After UNREADABLE_AFTER it is given up, and the person is told.
"""
from __future__ import annotations

import logging
from collections.abc import Callable

import aiohttp
from nio import AsyncClient, ErrorResponse, Event, LocalProtocolError, MegolmEvent
from nio.exceptions import EncryptionError

from bot.channels.matrix.device_keys import CryptoHealth
from bot.channels.matrix.images import media_in_the_clear
from bot.channels.matrix.messages import failure
from bot.channels.matrix.rooms import Received

log = logging.getLogger(__name__)

UNREADABLE_AFTER = 5 * 60.0  # seconds an encrypted event waits for its key before the person is told


def given_up(since: float, now: float, after: float = UNREADABLE_AFTER) -> bool:
    """Whether an event that could not be decrypted since `since` has waited long enough for its key."""
    return now - since >= after


class WaitingForKeys:
    """The encrypted events that wait for their key, and since when (by the channel's clock)."""

    def __init__(self, client: AsyncClient, clock: Callable[[], float], health: CryptoHealth | None = None) -> None:
        self.client = client
        self.clock = clock
        self.health = health or CryptoHealth()
        self._waiting: dict[str, tuple[Received, float]] = {}  # event id -> the event, since when it waits

    def items(self) -> list[Received]:
        """The waiting events, oldest first, to be tried again."""
        return [item for item, _since in self._waiting.values()]

    def clear(self) -> None:
        """Forget them (the inbox, which keeps them too, is read again)."""
        self._waiting.clear()

    def decrypt(self, event: MegolmEvent) -> Event | None:
        """The event decrypted now that its key is here, or None while it is not."""
        try:
            readable = media_in_the_clear(self.client.decrypt_event(event))
        except EncryptionError:
            return None
        if self._waiting.pop(event.event_id, None) is not None:
            log.info("encrypted event %s can be read now", event.event_id)
        return readable

    def ours(self, event: MegolmEvent) -> bool:
        """Whether the event was sent before this start replaced a device whose keys were lost: its key was for
        that device, and no wait brings it (the cause is mnemo's, not the sender's)."""
        replaced = self.health.replaced_at
        return replaced is not None and event.server_timestamp / 1000 < replaced

    async def keep(self, item: Received, event: MegolmEvent) -> bool:
        """Keep an event that cannot be read (asking for its key the first time); True once it is given up (counted
        for /healthz)."""
        now = self.clock()
        since = self._waiting.get(event.event_id, (item, item.received_at or now))[1]
        if self.ours(event):
            self._waiting.pop(event.event_id, None)
            self.health.undecryptable, self.health.ours = self.health.undecryptable + 1, self.health.ours + 1
            log.warning("encrypted event %s from %s in %s was sent to the device whose keys were lost; it cannot be "
                        "read", event.event_id, event.sender, item.room_id)
            return True
        if given_up(since, now):
            self._waiting.pop(event.event_id, None)
            self.health.undecryptable += 1
            log.warning("gave up on encrypted event %s from %s in %s: its key did not come in %d minutes",
                        event.event_id, event.sender, item.room_id, UNREADABLE_AFTER // 60)
            return True
        if event.event_id not in self._waiting:
            log.warning("cannot decrypt event %s from %s in %s yet (session %s); asking for its key",
                        event.event_id, event.sender, item.room_id, event.session_id)
            self._waiting[event.event_id] = (item, since)
            await self._ask(event)
        return False

    async def _ask(self, event: MegolmEvent) -> None:
        """Ask the bot's other devices (nio's key request) and the sender's device for an event's key."""
        client = self.client
        assert client.device_id is not None
        try:
            responses: list[object] = [await client.request_room_key(event)]
            if event.sender != client.user_id:
                request = event.as_key_request(event.sender, client.device_id, event.session_id, event.device_id)
                responses.append(await client.to_device(request))
        except LocalProtocolError:  # asked already for this session (nio keeps its requests across restarts)
            return
        except (TimeoutError, aiohttp.ClientError) as exc:
            responses = [exc]
        for response in responses:
            if isinstance(response, (ErrorResponse, Exception)):
                log.warning("could not ask for the key of %s: %s", event.event_id, failure(response))
