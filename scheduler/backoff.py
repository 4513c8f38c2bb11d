"""Back-off: check-ins the person ignores make the next ones rarer; the streak is read from the log, never counted."""
from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from datetime import timedelta

ANSWER_WITHIN = timedelta(hours=12)  # a check-in the person did not answer within this counts as ignored
MAX_FACTOR = 8  # the silence threshold grows to at most this many times its length
LOOK_BACK = 6  # check-ins looked at: enough to reach MAX_FACTOR


def ignored_streak(checkins: Sequence[float], user_messages: Sequence[float], now: float,
                   within: timedelta = ANSWER_WITHIN) -> int:
    """How many check-ins in a row, from the newest back, the person did not answer within `within`.

    An answer in time ends the streak; a check-in whose time to answer is not over yet counts neither way.
    Args:
        checkins: when check-ins were sent (any order).
        user_messages: when the person wrote, sorted (at least since the oldest check-in).
    """
    window, streak = within.total_seconds(), 0
    for sent in sorted(checkins, reverse=True):
        first_after = bisect_right(user_messages, sent)
        if first_after < len(user_messages) and user_messages[first_after] <= sent + window:
            break
        if now >= sent + window:
            streak += 1
    return streak


def backoff_factor(streak: int) -> int:
    """By how much the silence threshold grows: two ignored check-ins double it, each further one doubles again."""
    return 1 if streak < 2 else min(MAX_FACTOR, 2 ** (streak - 1))
