"""A clock a test moves by hand: `clock.now += 600`."""
from __future__ import annotations


class Clock:
    """Seconds since the epoch, as far as the code under test knows."""

    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now
