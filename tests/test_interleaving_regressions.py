"""What the state machine over random interleavings (tests/test_interleavings.py) found, each failure shrunk to its
shortest sequence of steps and kept here as a named test that replays it on the machine's own world.

A test of a failure that is still open is marked `xfail(strict=True)`, its invariant's code stands in `OPEN` (so the
machine's CI run tolerates it and fails on anything else); when the fix lands, the test passes, strict xfail turns
that into a failure, and the mark and the code go together."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.interleaving_kit import ASK_BACK, FULL_REQUEST, KUBA
from tests.test_interleavings import OPEN, Interleavings


@contextmanager
def machine() -> Iterator[Interleavings]:
    """The machine with a fresh world, closed after the test."""
    state = Interleavings()
    try:
        yield state
    finally:
        state.teardown()


def broken(state: Interleavings) -> list[str]:
    """What the last step broke, every invariant's code and words (nothing tolerated)."""
    return [f"{b.code}: {b.what}" for b in state.broken]


def test_every_open_code_names_a_regression_test_here_that_is_still_marked_xfail() -> None:
    source = Path(__file__).with_name("test_interleavings.py").read_text(encoding="utf-8")
    for code in OPEN:
        line = next(line for line in source.splitlines() if f'"{code}",' in line)
        name = line.split("#")[1].strip()
        marks = [m.name for m in getattr(globals()[name], "pytestmark", [])]
        assert "xfail" in marks, (code, name)


@pytest.mark.xfail(strict=True, reason="issue 52: lead fixing forwarded words kept out of extraction's facts")
def test_a_forwarded_move_to_kuba_is_no_fact_of_the_person() -> None:
    with machine() as state:
        state.forwarded(words=KUBA)
        notes = [row[0] for row in state.world.read("SELECT text FROM notes")]
        assert broken(state) == [] and not any("Kuba" in note for note in notes), notes


@pytest.mark.xfail(strict=True, reason="issue 52: lead fixing someone else's words never set a reminder")
def test_a_forwarded_reminder_request_sets_no_reminder() -> None:
    with machine() as state:
        state.forwarded(words=FULL_REQUEST)
        assert broken(state) == [] and state.world.run(state.world.reminders()) == {}


@pytest.mark.xfail(strict=True, reason="issue 52: lead fixing an ask-back answered only with nothing sent in between")
def test_a_reminder_pushed_after_the_ask_back_keeps_the_next_message_from_completing_it() -> None:
    with machine() as state:
        state.reminder_request(request=ASK_BACK)
        state.push(kind="reminder")
        state.typed(propose=False, words="Der Film war toll")
        assert broken(state) == [] and state.world.run(state.world.reminders()) == {}


@pytest.mark.xfail(strict=True, reason="issue 52: a question nobody answered is stored as a no (the issue's 'replaced "
                                      "by a newer one'; questions.py is the lead's)")
def test_a_profile_question_left_unanswered_for_a_day_is_not_stored_as_a_no() -> None:
    with machine() as state:
        state.typed(propose=False, words="Ich arbeite als Lehrerin")  # learnt: a profile fact waits for a yes
        state.typed(propose=False, words="Der Film war toll")  # asked under this reply
        assert state.world.asked and broken(state) == []
        state.clock_jump(seconds=86400.0)
        state.typed(propose=False, words="Der Film war toll")  # the question expired: dropped
        assert broken(state) == []
