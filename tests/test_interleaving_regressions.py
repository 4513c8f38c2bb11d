"""What the state machine over random interleavings (tests/test_interleavings.py) found, each failure shrunk to its
shortest sequence of steps and kept here as a named test that replays it on the machine's own world.

Each test failed on the machine's world before its fix (most were fixed on main by the lead meanwhile: b519773,
2919ac0, 51adcf7). A failure still open is marked `xfail(strict=True)` and its invariant's code stands in `OPEN`
(the machine's CI run tolerates exactly those and fails on anything else); when its fix lands, the test passes,
strict xfail turns that into a failure, and the mark and the code go together."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from bot.conversation.help_lines import crisis_help
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


def test_a_forwarded_move_to_kuba_is_no_fact_of_the_person() -> None:
    with machine() as state:
        state.forwarded(words=KUBA)
        notes = [row[0] for row in state.world.read("SELECT text FROM notes")]
        assert broken(state) == [] and not any("Kuba" in note for note in notes), notes


def test_a_forwarded_reminder_request_sets_no_reminder() -> None:
    with machine() as state:
        state.forwarded(words=FULL_REQUEST)
        assert broken(state) == [] and state.world.run(state.world.reminders()) == {}


def test_a_reminder_pushed_after_the_ask_back_keeps_the_next_message_from_completing_it() -> None:
    with machine() as state:
        state.reminder_request(request=ASK_BACK)
        state.push(kind="reminder")
        state.typed(propose=False, words="Der Film war toll")
        assert broken(state) == [] and state.world.run(state.world.reminders()) == {}


@pytest.mark.parametrize("kind", ["reminder", "morning", "diary", "date", "notice"])
def test_a_push_between_the_question_and_the_ok_keeps_it_from_deciding(kind: str) -> None:
    with machine() as state:
        state.typed(propose=True, words="Der Film war toll")  # a rule proposed: asked under the reply
        state.push(kind=kind)  # "⏰ Tabletten", the brief, the diary, a birthday, "💾 gemerkt"
        state.yes_or_no(words="ok")  # answers the push, not the question
        assert broken(state) == [] and state.world.run(state.world.store.rules.list(state.world.scope, "active")) == []


@pytest.mark.parametrize("command", ["/incognito", "/memories", "/settings zeitzone Asia/Tokyo"])
def test_a_command_between_the_question_and_the_ja_keeps_it_from_deciding(command: str) -> None:
    with machine() as state:
        state.typed(propose=True, words="Der Film war toll")
        state.command(command=command)  # the person's own message, and mnemo's answer to it
        state.yes_or_no(words="ja")
        assert broken(state) == [] and state.world.run(state.world.store.rules.list(state.world.scope, "active")) == []


def test_a_crisis_after_incognito_ran_out_gets_the_help_text_before_the_notice_that_it_ended() -> None:
    """Found by the machine (a): where the help text cannot go at once it leads the reply, and the sentence that the
    incognito stretch ended came before it."""
    with machine() as state:
        state.command(command="/incognito 30 min")
        state.clock_jump(seconds=3600.0)
        state.typed_crisis(at_once=False, words="Ich will mich heute Nacht umbringen.")
        sent = [s.text for s in state.world.step.sent]
        assert sent[0] == crisis_help("DE", "de") and "Inkognito" in sent[1], sent
        assert broken(state) == []
