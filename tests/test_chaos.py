"""The chaos bench (bench/chaos.py), bounded for CI: three workers on a PostgreSQL server of their own (restarting the
tests' shared one would break the other tests), six people writing, three of them setting a reminder every fourth time
they write (its message dated 50 s back, so "in 1 Minute" falls due during the run; every eighth time left a fast
round with 3 reminders, below the 4 the test asks for), two asking /deleteme in the middle; one round of a PostgreSQL
restart, a 4 s pause, a random worker and the leader killed. Every message answered (a repeat at most once), every
reminder sent once, nothing of the erased people in any table, file or log, and every worker healthy within 10 s of
the restart."""
from __future__ import annotations

import pytest

from bench.chaos import Plan, chaos, report

PLAN = Plan(rounds=1, people=6, deleters=2, pause=4.0, settle=2.0, every=2.0, reminder_minutes=1, remind_every=4,
            backdate=50.0,
            delay=0.02, health_cap=12.0, post_timeout=5.0, drain=15.0, seed=53)


async def test_chaos_round_loses_nothing_and_workers_come_back_after_a_restart() -> None:
    pytest.importorskip("pgserver")
    figures = await chaos(PLAN)
    print(report(figures, PLAN))
    assert figures.faults == []
    assert figures.messages >= 30 and figures.lost == [] and figures.more == []
    assert len(figures.repeated) <= PLAN.people  # the send window: at most one repeat a chat per kill or restart
    assert figures.reminders >= 4 and figures.reminders_lost == [] and figures.reminders_twice == []
    assert figures.erasures == PLAN.deleters
    assert (figures.erased_rows, figures.erased_files) == (0, [])
    assert all(s is not None and s <= 10.0 for s in figures.restarts), figures.restarts
    assert all(s is not None for s in figures.pauses), figures.pauses
