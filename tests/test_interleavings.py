"""Issue 52, point 4: a state machine over random interleavings of everything that can happen to one person.

Hypothesis draws sequences of steps (the rules below): the person's messages of every kind (typed text, a crisis
sentence, 'ja'/'nein'/'ok', a photo with a caption, a voice note, a .txt document, an edit, a forward, a command, a
reminder request that is asked back), a reaction, a press on a question's button (its own or a stale one), mnemo's
own pushes of every outbox kind through the scheduler's real OutboxSender, clock jumps, zone and hours changes and
restarts; the chat model proposes a rule when a step says so, so a yes/no question is often open. After every step
the invariants of tests/interleaving_checks.py are checked; a failure is shrunk to its shortest sequence and kept
as a named test in tests/test_interleaving_regressions.py.

CI runs a bounded, derandomized run (`CI_RUN`): the same examples every time, so a red CI means a change broke a
promise, never an unlucky draw; `python -m bench.interleavings` runs longer with fresh random draws
(docs/testing.md). `OPEN` holds the invariants a known failure still breaks (each with its xfail regression test):
the CI run tolerates exactly those and fails on any other; the bench reports them too.
"""
from __future__ import annotations

from typing import ClassVar

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from tests.interleaving_checks import check, snapshot
from tests.interleaving_kit import (
    ASK_BACK,
    CRISIS,
    EVERYDAY,
    FULL_REQUEST,
    KUBA,
    NO,
    PUSH_KINDS,
    YES,
    Broken,
    Step,
    World,
    document,
    nothing,
    photo,
    voice,
)

# Invariants that known failures still break, each with its xfail regression test (the lead removes a code when its
# fix lands, together with the test's mark).
OPEN: frozenset[str] = frozenset()
CI_RUN = settings(max_examples=50, stateful_step_count=30, deadline=None, derandomize=True, database=None,
                  suppress_health_check=(HealthCheck.too_slow, HealthCheck.filter_too_much), print_blob=False)
ZONES = ("Europe/Berlin", "America/New_York", "Asia/Tokyo", "Pacific/Auckland")
HOURS = ("8-22", "10-18", "6-23")
JUMPS = (60.0, 600.0, 3600.0, 4 * 3600.0, 10 * 3600.0, 86400.0, 3 * 86400.0)
COMMANDS = ("/incognito", "/incognito aus", "/incognito an", "/incognito 30 min", "/memories",
            *(f"/settings zeitzone {zone}" for zone in ZONES), *(f"/settings stunden {hours}" for hours in HOURS))
everyday = st.sampled_from(EVERYDAY)
crisis = st.sampled_from(CRISIS)
answers = st.sampled_from(YES + NO)


class Interleavings(RuleBasedStateMachine):
    """One person's conversation with mnemo, one random step at a time."""

    tolerated: ClassVar[frozenset[str]] = OPEN  # the bench sets it to none, to report everything
    found: ClassVar[list[Broken]] = []  # every broken promise seen, tolerated ones too (the bench prints them)
    examples: ClassVar[int] = 0
    steps: ClassVar[int] = 0

    def __init__(self) -> None:
        super().__init__()
        Interleavings.examples += 1
        self.world = World()
        self.broken: list[Broken] = []

    def teardown(self) -> None:
        self.world.close()

    def _do(self, step: Step, work: object) -> None:
        """Run a step between a snapshot and the checks."""
        Interleavings.steps += 1
        world = self.world
        before = world.run(snapshot(world))
        world.step = step
        world.run(work)  # type: ignore[arg-type]
        world.propose_next = False
        self.broken = world.run(check(world, before))
        Interleavings.found.extend(self.broken)

    def _token(self) -> str:
        return f"Quokka{self.world.fresh()}"

    def _say(self, name: str, kind: str, text: str, *, crisis: bool = False, forwarded: bool = False,
             words: str = "", **how: object) -> None:
        step = Step(name, kind=kind, crisis=crisis, own=not forwarded, words=words)
        self._do(step, self.world.message(step, text, forwarded=forwarded, **how))  # type: ignore[arg-type]

    # --- the person's messages ---------------------------------------------------------------------------

    @rule(words=everyday, propose=st.booleans())
    def typed(self, words: str, propose: bool) -> None:
        self.world.propose_next = propose
        self._say("typed", "text", f"{words} {self._token()}")

    @rule(words=crisis, at_once=st.booleans())
    def typed_crisis(self, words: str, at_once: bool) -> None:
        self._say("typed_crisis", "text", words, crisis=True, help_at_once=at_once)

    @rule(words=answers)
    def yes_or_no(self, words: str) -> None:
        self._say("yes_or_no", "text", words)

    @rule(words=st.one_of(everyday, crisis, answers), propose=st.booleans())
    def photo_with_caption(self, words: str, propose: bool) -> None:
        self.world.propose_next = propose
        text = f"{words} {self._token()}" if words in EVERYDAY else words
        self._say("photo", "caption", text, crisis=words in CRISIS, attachment=photo())

    @rule(words=st.one_of(everyday, crisis, answers), propose=st.booleans())
    def voice_note(self, words: str, propose: bool) -> None:
        self.world.propose_next = propose
        spoken = f"{words} {self._token()}" if words in EVERYDAY else words
        self._say("voice", "voice", "", crisis=words in CRISIS, words=spoken, attachment=voice(spoken))

    @rule(words=st.one_of(everyday, crisis))
    def text_document(self, words: str) -> None:
        inside = f"Notizen {self._token()}\n{words}\nEnde."
        self._say("document", "document", "Lies mal", crisis=words in CRISIS, words=inside,
                  attachment=document(inside))

    @rule(words=st.one_of(everyday, crisis))
    def edit(self, words: str) -> None:
        """An earlier message edited: answered as a message of its own only when the new words show a crisis (as
        `Channel.edit_in_crisis` decides), else ignored."""
        world = self.world
        if words in CRISIS and world.run(world.engine.config.crisis_detector.crisis(words)):
            self._say("edit", "edit", words, crisis=True, ref=f"m1:edit:{world.fresh()}")
        else:
            self._do(Step("edit ignored"), nothing())

    @rule(words=st.sampled_from((KUBA, FULL_REQUEST, "ja", "nein", *CRISIS, *EVERYDAY)))
    def forwarded(self, words: str) -> None:
        self._say("forwarded", "forward", words, crisis=words in CRISIS, forwarded=True)

    @rule(command=st.sampled_from(COMMANDS))
    def command(self, command: str) -> None:
        self._say("command", "command", command, command=True)

    @rule(request=st.sampled_from((ASK_BACK, FULL_REQUEST)))
    def reminder_request(self, request: str) -> None:
        self._say("reminder_request", "text", request)

    # --- what is not a message -------------------------------------------------------------------------

    @rule(emoji=st.sampled_from(("❤️", "👍", "😢")))
    def reaction(self, emoji: str) -> None:
        step = Step("reaction")
        self._do(step, self.world.react(step, emoji))

    @precondition(lambda self: bool(self.world.shown_buttons))
    @rule(pick=st.integers(0, 1000), answer=st.sampled_from(("yes", "no")))
    def press(self, pick: int, answer: str) -> None:
        """A press on a question's button: the open question's or a stale one, yes or no."""
        shown = self.world.shown_buttons
        kind, _, number = shown[pick % len(shown)].split(":")
        step = Step("press", kind="press")
        self._do(step, self.world.press(step, f"{kind}:{answer}:{number}"))

    @rule(kind=st.sampled_from(PUSH_KINDS))
    def push(self, kind: str) -> None:
        step = Step(f"push {kind}", kind="push")
        self._do(step, self.world.push(step, kind))

    @rule(seconds=st.sampled_from(JUMPS))
    def clock_jump(self, seconds: float) -> None:
        step = Step(f"jump {seconds:g} s", kind="jump")
        self._do(step, self.world.jump(step, seconds))

    @rule()
    def restart(self) -> None:
        self._do(Step("restart"), self.world.restart())

    @invariant()
    def promises_hold(self) -> None:
        broken = [b for b in self.broken if b.code not in self.tolerated]
        assert not broken, "\n".join(f"{b.code}: {b.what}" for b in broken)


Interleavings.TestCase.settings = CI_RUN
TestInterleavings = Interleavings.TestCase
