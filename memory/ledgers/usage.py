"""Token usage per local day and purpose, so a daily budget for background work can be kept."""
from __future__ import annotations

from dataclasses import dataclass

from memory.storage.db import Database


@dataclass(frozen=True)
class DayUsage:
    """What the model calls of one purpose used on one day."""

    day: str
    purpose: str
    input_tokens: int
    output_tokens: int
    calls: int

    @property
    def tokens(self) -> int:
        """Input and output tokens together."""
        return self.input_tokens + self.output_tokens


class TokenUsage:
    """Add up the tokens of model calls per day ('2026-11-29', the deployment's zone) and purpose."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def add(self, day: str, purpose: str, input_tokens: int, output_tokens: int) -> None:
        """Count one call."""
        async with self.db.transaction() as tx:
            await tx.execute(
                "INSERT INTO token_usage(day, purpose, input_tokens, output_tokens, calls) VALUES (?, ?, ?, ?, 1)"
                " ON CONFLICT(day, purpose) DO UPDATE SET"
                " input_tokens = token_usage.input_tokens + excluded.input_tokens,"
                " output_tokens = token_usage.output_tokens + excluded.output_tokens, calls = token_usage.calls + 1",
                (day, purpose, input_tokens, output_tokens),
            )

    async def on(self, day: str, purpose: str) -> DayUsage:
        """The usage of one day and purpose (zeros when nothing was counted)."""
        async with self.db.reading() as tx:
            row = await tx.fetchone("SELECT input_tokens, output_tokens, calls FROM token_usage"
                                    " WHERE day = ? AND purpose = ?", (day, purpose))
        return DayUsage(day, purpose, *(row or (0, 0, 0)))

    async def latest(self, days: int = 7) -> list[DayUsage]:
        """The usage of the last `days` days that have any, newest first."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall(
                "SELECT day, purpose, input_tokens, output_tokens, calls FROM token_usage WHERE day IN"
                " (SELECT DISTINCT day FROM token_usage ORDER BY day DESC LIMIT ?) ORDER BY day DESC, purpose",
                (days,))
        return [DayUsage(*r) for r in rows]
