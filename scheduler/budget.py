"""The daily token budget for background work: extraction, summaries, reflection and the diary pause when it is spent.

Chat replies are never paused (a person waiting for an answer comes first), nor work a person asked for
(/think, /writediary); they still count. The day is the deployment's local day; at midnight the budget is new.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from memory import TokenUsage

log = logging.getLogger(__name__)

PURPOSE = "background"


def local_day(now: float, zone: ZoneInfo) -> str:
    """The local date of a moment, as the key the usage is counted under."""
    return datetime.fromtimestamp(now, zone).strftime("%Y-%m-%d")


def exhausted(spent: int, cap: int) -> bool:
    """Whether background work must pause: a cap is set (above 0) and the day's tokens reached it."""
    return cap > 0 and spent >= cap


@dataclass(frozen=True)
class BudgetStatus:
    """Today's background tokens against the cap (0: no cap)."""

    day: str
    spent: int
    cap: int

    @property
    def paused(self) -> bool:
        """Whether background work is paused for the rest of the day."""
        return exhausted(self.spent, self.cap)

    def describe(self) -> str:
        """One line for `mnemo doctor` and `mnemo stats`."""
        if self.cap <= 0:
            return f"{self.spent:,} background tokens today ({self.day}), no daily cap"
        state = "reached: background work paused until midnight" if self.paused else "within the cap"
        return f"{self.spent:,} of {self.cap:,} background tokens today ({self.day}), {state}"


class TokenBudget:
    """Counts the tokens of background calls per local day and tells whether background work may run."""

    def __init__(self, usage: TokenUsage, cap: int, zone: ZoneInfo) -> None:
        self.usage = usage
        self.cap = cap
        self.zone = zone
        self._warned: str | None = None  # the day the operator was told

    async def record(self, now: float, input_tokens: int, output_tokens: int) -> None:
        """Count one background call."""
        await self.usage.add(local_day(now, self.zone), PURPOSE, input_tokens, output_tokens)

    async def status(self, now: float) -> BudgetStatus:
        """Today's spending against the cap."""
        day = local_day(now, self.zone)
        return BudgetStatus(day, (await self.usage.on(day, PURPOSE)).tokens, self.cap)

    async def allows(self, now: float) -> bool:
        """Whether background work may run now; the first refusal of a day is one warning for the operator."""
        status = await self.status(now)
        if not status.paused:
            return True
        if self._warned != status.day:
            self._warned = status.day
            log.warning("daily token budget for background work reached: %s (MNEMO_BACKGROUND_TOKENS_PER_DAY); "
                        "extraction, summaries, reflection and diary pause until midnight, chat replies go on",
                        status.describe())
        return False
