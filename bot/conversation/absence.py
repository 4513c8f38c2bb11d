"""Absences the person announces or ends in the chat, kept so that check-ins hold back until they are back.

The span is computed by `scheduler.away.parse_away`; the model only hears what the program noted, as a line
of the turn's context, so its answer can say it (and never promises a date of its own).
"""
from __future__ import annotations

from datetime import datetime, timedelta

from memory import MemoryStore, Scope, is_group_scope
from scheduler.away import STATE_KEY, kept, parse_away, says_back, to_keep


class Absences:
    """Notes an announced absence, ends it when the person is back, and says so to the model."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store

    async def note(self, scope: Scope, text: str, now: datetime) -> str | None:
        """Keep or end an absence the message announces; the line for the model's context, or None.

        Only the person's own private chat counts: in a group one member's holiday holds nobody back.
        """
        if is_group_scope(scope.user_id):
            return None
        today, before = now.date(), kept(await self.store.state.get(scope, STATE_KEY))
        if before is not None and (today >= before.back or says_back(text)):
            await self.store.state.pop(scope, STATE_KEY)
            return (f"The person announced an absence from {before.start:%Y-%m-%d} until {before.back:%Y-%m-%d}"
                    " and writes again now: welcome them back.")
        away = parse_away(text, today)
        if away is None:
            return None
        await self.store.state.put(scope, STATE_KEY, to_keep(away))
        last = away.back - timedelta(days=1)
        return (f"The program noted an absence: the person is away from {away.start:%A %Y-%m-%d} to "
                f"{last:%A %Y-%m-%d} (back on {away.back:%A %Y-%m-%d}); you will not write on your own then. "
                "Acknowledge it briefly if it fits.")
