"""Delivery through the outbox: record first, send, mark sent; failed sends retried with backoff."""
from __future__ import annotations

import logging
import time
from collections.abc import Callable

from memory.models import Scope
from memory.outbox import ButtonRows
from memory.store import MemoryStore
from scheduler.errors import RetryLater
from scheduler.ports import Sender

log = logging.getLogger(__name__)

# Seconds before the 1st, 2nd, … retry; after the last one the message is given up (status failed).
BACKOFF = (30.0, 120.0, 600.0, 3600.0, 3 * 3600.0)


def next_try(attempts: int, now: float, wait: float = 0.0) -> float | None:
    """When to try again after `attempts` failed tries (never before the `wait` a channel asked for), or None."""
    return now + max(BACKOFF[attempts], wait) if attempts < len(BACKOFF) else None


class OutboxSender:
    """A Sender that never loses a message: each one is recorded before it is sent and marked after."""

    def __init__(self, store: MemoryStore, channel: Sender, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.channel = channel
        self.clock = clock

    async def deliver(self, scope: Scope, text: str, kind: str = "checkin", *, buttons: ButtonRows = ()) -> bool:
        """Record the message and try to send it now; True when it went out at once.

        Only kind "checkin" is logged as proactive (and so counts against the check-in budget).
        """
        item = await self.store.outbox.record(scope, kind, text, self.clock(), buttons)
        return await self._send(scope, item.id, kind, text, 0, buttons)

    async def flush(self, scopes: list[Scope]) -> int:
        """Retry every due message (after a failure or a restart); returns how many went out."""
        by_id = {s.id: s for s in scopes}
        sent = 0
        for item in await self.store.outbox.due(self.clock()):
            scope = by_id.get(item.scope_id)
            if scope is not None:
                sent += await self._send(scope, item.id, item.kind, item.text, item.attempts, item.buttons)
        return sent

    async def _send(self, scope: Scope, item_id: int, kind: str, text: str, attempts: int,
                    buttons: ButtonRows = ()) -> bool:
        now, wait = self.clock(), 0.0
        try:
            # Buttons only when there are some: senders written before buttons existed take just the text.
            delivered = await (self.channel.deliver(scope, text, buttons=buttons) if buttons
                               else self.channel.deliver(scope, text))
            error = "" if delivered else "the channel did not accept the message"
        except RetryLater as exc:
            delivered, error, wait = False, f"the channel asked to wait {exc.seconds:g} s", exc.seconds
            log.warning("outbox item %s: %s", item_id, error)
        except Exception as exc:
            delivered, error = False, f"{type(exc).__name__}: {exc}"
            log.warning("sending outbox item %s failed: %s", item_id, error)
        if not delivered:
            retry = next_try(attempts, now, wait)
            await self.store.outbox.mark_failed(item_id, error, retry)
            if retry is None:
                log.error("outbox item %s given up after %d tries: %s", item_id, attempts + 1, error)
            return False
        await self.store.outbox.mark_sent(item_id, now)
        await self.store.messages.add(scope, "assistant", text, channel="proactive", created_at=now,
                                      proactive=kind == "checkin")
        return True
