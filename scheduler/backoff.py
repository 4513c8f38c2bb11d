"""Back-off: check-ins the person ignores make the next ones rarer; the streak is read from the log, never counted."""
from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from datetime import timedelta

ANSWER_WITHIN = timedelta(hours=12)  # a check-in the person did not answer within this counts as ignored
MAX_FACTOR = 8  # the silence threshold grows to at most this many times its length
LOOK_BACK = 6  # check-ins looked at: enough to reach MAX_FACTOR


def ignored_streak(checkins: Sequence[float], user_messages: Sequence[float], now: float,
                   within: timedelta = ANSWER_WITHIN, answered_in_incognito: float | None = None) -> int:
    """How many check-ins in a row, from the newest back, the person did not answer within `within`.

    An answer in time ends the streak, one in incognito too; a check-in whose time to answer is not over yet counts
    neither way.
    Args:
        checkins: when check-ins were sent (any order).
        user_messages: when the person wrote, sorted (at least since the oldest check-in).
        answered_in_incognito: when the newest check-in was sent that the person answered in time in incognito
            (its messages are not logged: only this time is kept); the streak ends there.
    """
    window, streak = within.total_seconds(), 0
    for sent in sorted(checkins, reverse=True):
        if answered_in_incognito is not None and sent <= answered_in_incognito + 1e-3:
            break
        first_after = bisect_right(user_messages, sent)
        if first_after < len(user_messages) and user_messages[first_after] <= sent + window:
            break
        if now >= sent + window:
            streak += 1
    return streak


def backoff_factor(streak: int) -> int:
    """By how much the silence threshold grows: two ignored check-ins double it, each further one doubles again."""
    return 1 if streak < 2 else min(MAX_FACTOR, 2 ** (streak - 1))


def answered_checkin(checkins: Sequence[float], at: float, within: timedelta = ANSWER_WITHIN) -> float | None:
    """The check-in a message at `at` answers in time (the newest sent before it, when `at` lies within `within`
    of it); None when it answers none."""
    before = [sent for sent in checkins if sent < at]
    newest = max(before, default=None)
    return newest if newest is not None and at <= newest + within.total_seconds() else None
