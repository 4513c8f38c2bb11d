"""A per-user rate limit: a token bucket, decided by a pure function with the clock passed in.

A message counts at the moment the person sent it (as the messenger says), never later than now: messages written
while mnemo was down are counted as they were written, not all at once when it is back.

A refused message is neither read nor stored; the first refusal of a streak gets one short sentence, the
rest of the streak gets silence, so a flood cannot make mnemo flood back.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

Verdict = Literal["pass", "tell", "quiet"]


@dataclass(frozen=True)
class Bucket:
    """How many messages may pass right now, as of a moment."""

    tokens: float
    at: float


def take(bucket: Bucket | None, now: float, per_minute: float, burst: float) -> tuple[bool, Bucket]:
    """Whether one more message may pass at `now`, and the bucket after it (it refills per_minute, up to burst).

    A message older than the bucket's moment (out of order) refills nothing and leaves the moment where it was.
    """
    tokens = burst if bucket is None else min(burst, bucket.tokens + max(0.0, now - bucket.at) * per_minute / 60)
    at = now if bucket is None else max(now, bucket.at)
    if tokens >= 1:
        return True, Bucket(tokens - 1, at)
    return False, Bucket(tokens, at)


def counted_at(now: float, sent_at: float | None) -> float:
    """The moment a message counts at: when it was sent, but never after now (None: it counts now)."""
    return now if sent_at is None else min(now, sent_at)


class RateLimiter:
    """Per-user buckets in memory (a restart starts them full); 0 per minute turns the limit off."""

    def __init__(self, per_minute: float, burst: float | None = None, clock: Callable[[], float] = time.time) -> None:
        self.per_minute = per_minute
        self.burst = per_minute if burst is None else burst
        self.clock = clock
        self._buckets: dict[str, Bucket] = {}
        self._told: set[str] = set()

    def check(self, user_id: str, sent_at: float | None = None) -> Verdict:
        """'pass', or for a refused message 'tell' (the first of a streak) or 'quiet'; counted when it was `sent_at`."""
        if self.per_minute <= 0:
            return "pass"
        moment = counted_at(self.clock(), sent_at)
        passed, self._buckets[user_id] = take(self._buckets.get(user_id), moment, self.per_minute, self.burst)
        if passed:
            self._told.discard(user_id)
            return "pass"
        if user_id in self._told:
            return "quiet"
        self._told.add(user_id)
        return "tell"
