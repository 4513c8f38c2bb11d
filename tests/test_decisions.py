"""The pure decisions of issue 38's one decision model: which message may answer a question by typing, what a typed
answer does to a held call, which reaction stands for a button, when a rule is the same as one already kept, and
when an answer completes a reminder asked back."""
from __future__ import annotations

from datetime import UTC, datetime

from bot.channels.matrix.messages import reaction_choices
from bot.channels.telegram.choices import answer_of
from bot.conversation.questions import UNLOGGED, OpenQuestion, marks_next, typed_answer_counts, typed_outcome
from bot.conversation.reminder_requests import completes_ask_back
from bot.exchange import Button
from memory.ledgers.choices import Choice
from memory.models import Message
from memory.records.learned_rules import same_rule

AT = datetime(2026, 12, 2, tzinfo=UTC)


def question(**fields: object) -> OpenQuestion:
    base: dict[str, object] = {"kind": "rule", "item_id": 3, "asked_at": 0.0, "owner": "anna", "number": 1,
                               "asked_under": 10}
    return OpenQuestion(**{**base, **fields})  # type: ignore[arg-type]


def message(id_: int, role: str = "assistant", proactive: bool = False, kind: str = "") -> Message:
    kind = kind or ("checkin" if proactive else "reply" if role == "assistant" else "")
    return Message(id_, role, "…", AT, proactive=proactive, kind=kind)


def test_only_the_asked_persons_first_message_after_the_question_is_marked() -> None:
    q = question()
    assert marks_next(q, 12, "anna", True)
    assert not marks_next(q, 10, "anna", True)  # the message it was asked under
    assert not marks_next(q, 12, "ben", True)  # someone else's (in a group)
    assert not marks_next(question(next_message=12), 14, "anna", True)  # a later one of hers
    assert not marks_next(question(asked_under=None), 12, "anna", True)  # a question kept from before issue 38
    assert marks_next(question(owner=None), 12, "ben", True) and not marks_next(question(owner=None), 12, "eve", False)
    assert marks_next(q, None, "anna", True)  # in incognito (nothing logged)


def test_a_typed_answer_counts_only_as_that_message_and_with_no_check_in_between() -> None:
    q = question(next_message=12)
    assert typed_answer_counts(q, 12, [message(11)])
    assert not typed_answer_counts(q, 14, [message(11), message(12, "user"), message(13)])  # two messages later
    assert not typed_answer_counts(q, 12, [message(11), message(11, proactive=True)])  # a check-in came between
    assert not typed_answer_counts(question(), 12, [message(11)])  # never marked
    assert typed_answer_counts(question(next_message=UNLOGGED), UNLOGGED, [message(11)])


def test_anything_the_companion_sent_in_between_leaves_the_question_to_its_buttons() -> None:
    """Issue 52: a reminder ('⏰ Tabletten') between the question and the person's 'ok' took the 'ok' as the answer;
    every kind of message the companion sends now counts, logged or only pushed."""
    q = question(next_message=12)
    for kind in ("reminder", "morning", "date", "diary", "help", "press", "push"):
        assert not typed_answer_counts(q, 12, [message(11), message(11, kind=kind)], now=60.0), kind
    assert not typed_answer_counts(q, 12, [message(11)], pushed=["notice"], now=60.0)  # a saved notice, not logged
    assert not typed_answer_counts(q, 12, [message(11), message(11, "user"), message(11)], now=60.0)  # a group's reply
    assert typed_answer_counts(q, 12, [message(11)], pushed=[], now=3599.0)


def test_a_typed_answer_counts_only_within_an_hour_of_the_question() -> None:
    q = question(next_message=12)
    assert typed_answer_counts(q, 12, [message(11)], now=3600.0)
    assert not typed_answer_counts(q, 12, [message(11)], now=3601.0)  # only the buttons decide now


def test_a_typed_yes_never_runs_a_held_call_a_typed_no_declines_it() -> None:
    assert typed_outcome("tool", "yes") == "press" and typed_outcome("tool", "no") == "no"
    assert typed_outcome("rule", "yes") == "yes" and typed_outcome("profile", "no") == "no"
    assert typed_outcome("rule", None) is None and typed_outcome("tool", None) is None


def choice(question: str, options: dict[str, str]) -> Choice:
    return Choice(id=1, scope_id=1, channel="telegram", message_ref="1:2", options=options, owner=None,
                  question=question, extra={"message": 2})


def test_a_thumbs_up_stands_for_ja_of_a_rule_but_never_of_a_held_call() -> None:
    rule = choice("rule:4", {"rule:yes:4": "Ja", "rule:no:4": "Nein"})
    call = choice("tool:1", {"tool:yes:1": "Ja", "tool:no:1": "Nein"})
    assert answer_of(rule, "👍") == "rule:yes:4" and answer_of(rule, "👎") == "rule:no:4"
    assert answer_of(call, "👍") is None and answer_of(call, "👎") == "tool:no:1"


def test_on_matrix_a_held_call_is_answered_by_the_reactions_its_legend_names() -> None:
    rule = ((Button("Ja", "rule:yes:4"), Button("Nein", "rule:no:4")),)
    call = ((Button("Ja", "tool:yes:1"), Button("Nein", "tool:no:1")),)
    assert reaction_choices(rule, "de") == ([("👍", "rule:yes:4"), ("👎", "rule:no:4")],
                                            "Reagiere mit: 👍 Ja · 👎 Nein")
    pairs, legend = reaction_choices(call, "de")
    assert [data for _, data in pairs] == ["tool:yes:1", "tool:no:1"] and "👍" not in dict(pairs)
    assert legend.endswith(f"{pairs[0][0]} Ja · {pairs[1][0]} Nein")


def test_the_same_rule_in_other_words_but_never_across_a_negation() -> None:
    assert same_rule("Keine Emojis verwenden.", "keine emojis verwenden")
    assert same_rule("Keine Emojis verwenden.", "Verwende keine Emojis")
    assert same_rule("Antworte kürzer.", "Antworte kürzr")
    assert not same_rule("Benutze Emojis.", "Benutze keine Emojis.")
    assert not same_rule("Antworte kürzer.", "Antworte länger.")
    assert not same_rule("Sprich mich mit du an.", "Sprich mich mit Sie an.")


def test_an_answer_completes_a_reminder_asked_back_only_right_after_it() -> None:
    assert completes_ask_back(["Erinnere mich morgen", "time", 7, 0.0], 7)
    assert not completes_ask_back(["Erinnere mich morgen", "time", 7, 0.0], 9)
    assert not completes_ask_back(["Erinnere mich morgen", "time", 7], 7)  # kept before issue 52: no time
    assert not completes_ask_back(["Erinnere mich morgen", "time"], 7)  # kept from before: no position
    assert not completes_ask_back(None, 7)
