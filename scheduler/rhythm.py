"""When a person is likely to read: hours learned from their rhythm, always within the active hours (pure).

The weight of an hour is what the person wrote in it plus what they answered (an answer to a check-in
counts twice: it shows they read what came). Each hour is smoothed with half of its neighbours, since
someone who writes at 20:00 also reads at 19:00. A weekday with little weight of its own is judged by
its kind of day (Monday to Friday, or the weekend), and only when that has little too by the whole week:
evenings after work say nothing about a Sunday morning. With too little data (a newcomer) every active
hour is likely, as before anything was learned.
"""
from __future__ import annotations

from collections.abc import Sequence

from memory import Histogram

MIN_TOTAL = 6.0  # decayed messages before anything is learned (a week of one a day stays above it for weeks)
MIN_WEEKDAYS = 3  # ... spread over at least this many weekdays (one long first evening teaches nothing yet)
MIN_DAY = 3.0  # a weekday with less weight of its own is judged by its kind of day, then by the whole week
WORKDAYS, WEEKEND = range(5), range(5, 7)
SHARE = 0.25  # an active hour is likely when its smoothed weight reaches this share of the best active hour's
MORNING_SPAN = 3  # the brief's hour and the two after it: a message then means the person reads in the morning
MORNING_SHARE = 0.1  # ... when those hours hold at least this share of the day's weight


def active_hours_list(hours: tuple[int, int]) -> list[int]:
    """The local hours in [start, end), across midnight when start > end."""
    start, end = hours
    if start <= end:
        return list(range(start, min(end, 24)))
    return list(range(start, 24)) + list(range(0, end))


def learned(hist: Histogram) -> bool:
    """Whether there is enough data to go by (else every active hour counts)."""
    days = sum(1 for row in hist.wrote if sum(row) >= 1.0)
    return hist.total() >= MIN_TOTAL and days >= MIN_WEEKDAYS


def _profile(hist: Histogram, days: Sequence[int]) -> list[float]:
    """The weight of each hour (wrote + answered), summed over the given weekdays."""
    return [sum(hist.wrote[d][h] + hist.answered[d][h] for d in days) for h in range(24)]


def day_profile(hist: Histogram, weekday: int) -> list[float]:
    """The weight of each hour of a weekday; a thin day borrows its kind of day's, a thin kind the whole week's."""
    kind = WORKDAYS if weekday in WORKDAYS else WEEKEND
    for days in ((weekday,), kind, range(7)):
        profile = _profile(hist, days)
        if sum(profile) >= MIN_DAY:
            return profile
    return profile


def likely_hours(hist: Histogram, weekday: int, active_hours: tuple[int, int]) -> frozenset[int]:
    """The active hours of a weekday in which the person is likely to read; all of them with too little data."""
    hours = active_hours_list(active_hours)
    if not learned(hist):
        return frozenset(hours)
    profile = day_profile(hist, weekday)
    score = {h: profile[h] + 0.5 * (profile[(h - 1) % 24] + profile[(h + 1) % 24]) for h in hours}
    best = max(score.values(), default=0.0)
    if best <= 0:
        return frozenset(hours)  # the person writes only outside the active hours: nothing to prefer
    return frozenset(h for h in hours if score[h] >= SHARE * best)


def week_of_likely_hours(hist: Histogram, active_hours: tuple[int, int]) -> tuple[frozenset[int], ...]:
    """The likely hours of each weekday, Monday first."""
    return tuple(likely_hours(hist, day, active_hours) for day in range(7))


def reads_in_morning(hist: Histogram, weekday: int, hour: int) -> bool:
    """Whether the person usually reads around `hour` on this weekday (the brief); True with too little data."""
    if not learned(hist):
        return True
    profile = day_profile(hist, weekday)
    morning = sum(profile[(hour + i) % 24] for i in range(MORNING_SPAN))
    return morning >= MORNING_SHARE * sum(profile)


def spans(hours: frozenset[int]) -> list[tuple[int, int]]:
    """Hours as runs [(start, end)], end exclusive: {18, 19, 20} -> [(18, 21)]."""
    out: list[tuple[int, int]] = []
    for h in sorted(hours):
        if out and out[-1][1] == h:
            out[-1] = (out[-1][0], h + 1)
        else:
            out.append((h, h + 1))
    return out


def describe(week: Sequence[frozenset[int]], day_names: Sequence[str]) -> str:
    """The likely hours of a week in a line, days with the same hours together: 'Mo–Fr 18–21, Sa So 10–12'."""
    groups: list[tuple[list[int], frozenset[int]]] = []
    for day, hours in enumerate(week):
        if groups and groups[-1][1] == hours and groups[-1][0][-1] == day - 1:
            groups[-1][0].append(day)
        else:
            groups.append(([day], hours))
    parts = []
    for days, hours in groups:
        names = day_names[days[0]] if len(days) == 1 else f"{day_names[days[0]]}–{day_names[days[-1]]}"
        parts.append(f"{names} " + " ".join(f"{a}–{b}" for a, b in spans(hours)) if hours else f"{names} –")
    return ", ".join(parts)
