"""The yes/no question under the companion's message (a proposed rule, a profile fact, a held tool call), kept in
the scope's state.

One question is open at a time; it is asked under a reply, answered by its buttons, replaced by a newer rule or
call, and dropped unanswered after a day. A typed answer decides it only as the asked person's very next message
after it, and only when it clearly is a yes or a no (`consent.yes_or_no`); any other message is an ordinary one,
answered by the model, and from then on only the buttons decide (`typed_answer_counts`). A held call (a tool that
changes something outside) runs only at a press of its own yes button, never at a typed word; it is kept with its
question, so it survives a restart, and the person is told what came of it.
"""
from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from bot.conversation.answering import may_answer, sent_between
from bot.conversation.bubbles import fit_bubbles
from bot.conversation.consent import Verdict, yes_or_no
from bot.conversation.tools import HeldCall, ToolFailed, ToolGone, call_summary
from bot.conversation.turn import Turn
from bot.exchange import Button, Reply
from bot.profile_keys import profile_key
from bot.quoting import clip
from bot.texts import addressed, t
from memory import MemoryStore, Message, NotFound, Scope, is_group_scope, same_rule

log = logging.getLogger(__name__)

QUESTION = "question"  # the scope_state key of the open yes/no question
HELD_NUMBER = "held_call_number"  # the scope_state key of the number the last held call was asked under
QUESTION_HOURS = 24.0  # an unanswered question is dropped after this long
RESULT_CHARS = 600  # how much of a held call's result the person is shown
PROPOSED = "The person will be asked to confirm this rule with yes/no buttons; do not ask yourself."
HELD = ("The person is asked under your reply to confirm this call with yes/no buttons. It has not run: it runs only"
        " after their yes, and they are told its result then. Do not ask yourself; say in a few words what you would"
        " do.")
KNOWN_RULE = ("This rule is already active or already waits for the person's yes: nothing new is asked. Do not"
              " propose it again.")
ONE_QUESTION = ("error: another question already waits under this reply (a call or a rule for the person's yes);"
                " this one did not run. Ask for it in a later message.")

RunHeld = Callable[[Scope, HeldCall], Awaitable[str]]  # the engine's port: run a held call after the person's yes


@dataclass(frozen=True)
class OpenQuestion:
    """The yes/no question waiting under the companion's message: a proposed rule, a profile fact, a held call."""

    kind: str  # "rule" | "profile" | "tool"
    item_id: int
    asked_at: float
    owner: str | None = None  # who was asked (in a group, only they may answer)
    number: int = 0  # the person's own number of the rule or fact (a held call's number), which its buttons carry
    call: dict[str, Any] | None = None  # a held call, for the kind "tool" (`HeldCall.as_dict`)
    asked_under: int | None = None  # the person's message whose reply asked it (None: kept from before issue 38)
    next_message: int | None = None  # the asked person's first message after it (-1: one in incognito, not logged)

    @property
    def key(self) -> str:
        """The question's name in buttons and choices ('rule:3', by the person's own number)."""
        return f"{self.kind}:{self.number}"

    def as_dict(self) -> dict[str, object]:
        """The question as JSON-ready data for the scope's state."""
        return {"kind": self.kind, "item_id": self.item_id, "asked_at": self.asked_at, "owner": self.owner,
                "number": self.number, "call": self.call, "asked_under": self.asked_under,
                "next_message": self.next_message}


UNLOGGED = -1  # `next_message` of a question whose asked person wrote next in incognito (nothing logged)


def marks_next(question: OpenQuestion, message_id: int | None, sender: str, may_decide: bool) -> bool:
    """Whether this message (None: one not logged, in incognito) is the asked person's first after the question, and
    so the only one a typed answer may decide it with: it came after the question, none of theirs came before, and
    it is theirs (with no owner: of someone who may decide). In a group, other members' messages do not count."""
    if question.asked_under is None or question.next_message is not None:
        return False
    if message_id is not None and message_id <= question.asked_under:
        return False
    return sender == question.owner if question.owner is not None else may_decide


def typed_answer_counts(question: OpenQuestion, message_id: int, between: list[Message], pushed: Sequence[str] = (),
                        now: float | None = None) -> bool:
    """Whether a typed answer may decide the question: only the asked person's very next message after it, and only
    when the companion sent nothing else in between (a reply to someone else, a check-in, a reminder, a brief, a
    saved notice: `pushed` are the outbox's kinds sent since), which the 'ja' may answer instead, and within an hour
    of the asking (`now`: when it came). A later message never decides it, nor does one under a question kept from
    before this rule."""
    return (question.asked_under is not None and question.next_message == message_id
            and may_answer(between, pushed, question.asked_at, question.asked_at if now is None else now))


def typed_outcome(kind: str, verdict: Verdict | None) -> Literal["yes", "no", "press"] | None:
    """What a clear typed answer does to a question of this kind: a held call (it acts outside mnemo's memory) is
    only declined by a typed no; its yes is its own button's ('press': the person is told so)."""
    if verdict == "yes" and kind == "tool":
        return "press"
    return verdict


def question_expired(asked_at: float, now: float, hours: float = QUESTION_HOURS) -> bool:
    """Whether a question asked at `asked_at` has waited too long for its answer."""
    return now - asked_at >= hours * 3600


def yes_no_buttons(kind: str, number: int, lang: str) -> tuple[Button, ...]:
    """The yes/no buttons under a question about a rule or a profile fact, by the user's own number of it."""
    return (Button(t(lang, "yes"), f"{kind}:yes:{number}"), Button(t(lang, "no"), f"{kind}:no:{number}"))


def rule_buttons(number: int, lang: str) -> tuple[Button, ...]:
    """The yes/no buttons under a rule question, by the user's own number of the rule."""
    return yes_no_buttons("rule", number, lang)


class OpenQuestions:
    """Asks, decides and drops the scope's open question; the state lives in the database."""

    def __init__(self, store: MemoryStore, lang: str, clock: Callable[[], float],
                 run_held: RunHeld | None = None) -> None:
        self.store, self.lang, self.clock = store, lang, clock
        self.run_held = run_held  # runs a held call at the yes (None: no tool can be held, a kept call is gone)

    async def current(self, scope: Scope, turn: Turn | None = None) -> OpenQuestion | None:
        """The yes/no question waiting for an answer; one that expired or was decided elsewhere is dropped
        (and named in the turn's `closes`, so its buttons go)."""
        raw = await self.store.state.get(scope, QUESTION)
        if raw is None:
            return None
        question = OpenQuestion(**raw)
        if await self._still_open(scope, question) and not question_expired(question.asked_at, self.clock()):
            return question
        await self.store.state.pop(scope, QUESTION)
        await self._drop(scope, question)
        if turn is not None:
            turn.closes.append(question.key)
        return None

    async def note(self, turn: Turn) -> None:
        """Mark a logged message that is the asked person's first after the open question (engine's log step)."""
        raw = await self.store.state.get(turn.scope, QUESTION)
        if raw is None:
            return
        question = OpenQuestion(**raw)
        incoming = turn.incoming
        if marks_next(question, turn.message_id, incoming.sender or incoming.user_id, incoming.may_decide):
            await self._mark(turn.scope, question, turn.message_id)

    async def answer(self, turn: Turn) -> Reply | None:
        """A typed yes or no as the asked person's very next message decides the open question; any other message
        (or a later one, or a forwarded one: someone else's words) leaves it to its buttons (None). In incognito the
        message is not logged: the first one of the person's there counts, and marks the question."""
        question = await self.current(turn.scope, turn)
        if question is None or not self._may_decide(turn, question):
            return None
        incoming = turn.incoming
        if turn.logged_id is None:  # incognito: nothing is logged, so the person's first message is marked here
            if not marks_next(question, None, incoming.sender or incoming.user_id, incoming.may_decide):
                return None
            if not await self._mark(turn.scope, question, UNLOGGED):
                return None  # decided or replaced meanwhile
            question = replace(question, next_message=UNLOGGED)
            message_id, between = UNLOGGED, await self._since(turn.scope, question)
        else:
            message_id, between = turn.message_id, await self._since(turn.scope, question, turn.message_id)
        own = turn.intake.own
        if not own:  # someone else's words (a forward) never answer: it was the next message, only the buttons decide
            return None
        now = self.clock()
        pushed = await sent_between(self.store, turn.scope, question.asked_at, now)
        if not typed_answer_counts(question, message_id, between, pushed, now):
            return None
        outcome = typed_outcome(question.kind, yes_or_no(own))
        if outcome is None:
            return None
        if outcome == "press":  # the question's own buttons again, under the sentence that points to them
            call = HeldCall.from_dict(question.call or {})
            _, buttons = await self.asking(turn.scope, question)
            return Reply((t(self.lang, "tool_press_to_run", tool=call.title),), buttons=(buttons,))
        text = await self._decide(turn.scope, question, outcome, incoming.text)
        return Reply((text or t(self.lang, "button_stale"),), closes=(question.key,))

    async def press(self, scope: Scope, key: str, verdict: str) -> str | None:
        """A yes or no button on a held call ('tool:3'): what came of it, kept as the companion's message so the
        model knows it; None when that question is no longer open."""
        question = await self.current(scope)
        if question is None or question.key != key:
            return None
        text = await self._decide(scope, question, verdict, "button")
        if text is not None:
            await self.store.messages.add(scope, "assistant", text, created_at=self.clock(), kind="press")
        return text

    async def propose(self, turn: Turn, text: str) -> str:
        """Propose a rule in this turn (asked under the reply); what the model is told of it."""
        text = " ".join(text.split())[:300]
        if not text:
            return "error: empty rule"
        if turn.held is not None:
            return ONE_QUESTION
        if any(same_rule(rule.text, text) for rule in await self.store.rules.list(turn.scope)):
            return KNOWN_RULE  # an active rule (or the one waiting) is never proposed and stored a second time
        turn.proposed = await self.store.rules.propose(turn.scope, text)
        return PROPOSED

    async def hold(self, turn: Turn, call: HeldCall) -> str:
        """Hold a call of a tool that changes something in this turn (asked under the reply); what the model is told."""
        if turn.held is not None or turn.proposed is not None:
            return ONE_QUESTION
        turn.held = call
        return HELD

    async def ask(self, turn: Turn) -> None:
        """Ask one yes/no question under the reply: a call held or a rule proposed in this turn, else a profile fact
        waiting.

        A new call or rule replaces an open question (whose buttons go); a profile fact is asked only while no
        question is open, so a question is never asked again on every reply.
        """
        scope, rule, held, reply = turn.scope, turn.proposed, turn.held, turn.reply
        assert reply is not None  # the model's answer is written before a question goes under it
        open_now = await self.current(scope, turn)
        # Who may answer: the one who asked; a group member who is no admin cannot, so then any admin may.
        owner = (turn.incoming.sender or turn.incoming.user_id) if turn.incoming.may_decide else None
        if held is not None or rule is not None:
            if open_now is not None:
                await self.store.state.pop(scope, QUESTION)
                turn.closes.append(open_now.key)
            if held is not None:
                number = await self._held_number(scope)
                question = OpenQuestion("tool", number, self.clock(), owner, number, held.as_dict(),
                                        turn.logged_id)
            else:
                assert rule is not None
                number = await self.store.numbers.of(scope, "rule", rule.id)
                question = OpenQuestion("rule", rule.id, self.clock(), owner, number, asked_under=turn.logged_id)
        elif open_now is None and turn.incoming.may_decide and (fact := await self.store.profile.pending(scope)):
            question = OpenQuestion("profile", fact.id, self.clock(), owner,
                                    await self.store.numbers.of(scope, "profile", fact.id),
                                    asked_under=turn.logged_id)
        else:
            return
        text, buttons = await self.asking(scope, question)
        await self.store.state.put(scope, QUESTION, question.as_dict(), self.clock())
        turn.reply = Reply(fit_bubbles((*reply.bubbles, text)), buttons=(buttons,))  # the bubbles as they were split

    async def asking(self, scope: Scope, question: OpenQuestion) -> tuple[str, tuple[Button, ...]]:
        """The sentence that asks a question and its yes/no buttons (by the person's own number)."""
        if question.kind == "tool":
            call = HeldCall.from_dict(question.call or {})
            summary = call_summary(call.arguments, call.labels, self.lang)
            text = t(self.lang, "tool_question", tool=call.title, args=f"\n{summary}" if summary else "")
            return text, yes_no_buttons("tool", question.number, self.lang)
        if question.kind == "rule":
            rule = await self.store.rules.get(scope, question.item_id)
            return t(self.lang, "rule_question", rule=rule.text), rule_buttons(question.number, self.lang)
        fact = await self.store.profile.pending_fact(scope, question.item_id)
        text = t(self.lang, addressed("profile_question", is_group_scope(scope.user_id)),
                 fact=f"{profile_key(fact.key, self.lang)}: {fact.value}")
        return text, yes_no_buttons("profile", question.number, self.lang)

    def _may_decide(self, turn: Turn, question: OpenQuestion) -> bool:
        """Whether the sender may answer: in a group only an admin, and only the one who was asked."""
        if not turn.incoming.may_decide:
            return False
        sender = turn.incoming.sender or turn.incoming.user_id
        return not is_group_scope(turn.scope.user_id) or question.owner in (None, sender)

    async def _decide(self, scope: Scope, question: OpenQuestion, verdict: str, reason: str) -> str | None:
        """Apply a yes or no to the open question and close it; the sentence that says what happened (None: it was
        decided meanwhile, by a press or a message handled at the same time)."""
        taken = await self.store.state.pop(scope, QUESTION)
        if question.kind == "tool":
            if taken is None or OpenQuestion(**taken).key != question.key:
                if taken is not None:  # another question came meanwhile: it stays
                    await self.store.state.put(scope, QUESTION, taken, self.clock())
                return None
            return await self._run_call(scope, HeldCall.from_dict(question.call or {}), verdict)
        if question.kind == "rule":
            rule = await self.store.rules.decide(scope, question.item_id, "active" if verdict == "yes" else "rejected",
                                                 reason=reason)
            return t(self.lang, "rule_saved", rule=rule.text) if verdict == "yes" else t(self.lang, "rule_dropped")
        fact = await self.store.profile.decide(scope, question.item_id, verdict == "yes")
        if verdict == "no":
            return t(self.lang, "rule_dropped")
        return t(self.lang, "profile_saved", fact=f"{profile_key(fact.key, self.lang)}: {fact.value}")

    async def _run_call(self, scope: Scope, call: HeldCall, verdict: str) -> str:
        """Run a held call at a yes (never at a no); the sentence that tells the person what came of it."""
        if verdict == "no":
            return t(self.lang, "tool_not_run", tool=call.title)
        try:
            if self.run_held is None:
                raise ToolGone(f"{call.title} is no longer available")
            result = await self.run_held(scope, call)
        except ToolGone:
            log.warning("held call of %s not run: the tool is no longer offered", call.tool)
            return t(self.lang, "tool_gone", tool=call.title)
        except ToolFailed as exc:  # the message is English, for DEBUG; the person is told why in their language
            log.warning("held call of %s failed (%s)", call.tool, exc.why)
            log.debug("held call of %s failed: %s", call.tool, exc)
            return t(self.lang, "tool_failed", tool=call.title, error=t(self.lang, f"tool_failed_{exc.why}"))
        return t(self.lang, "tool_done", tool=call.title, result=clip(result.strip(), RESULT_CHARS))

    async def _mark(self, scope: Scope, question: OpenQuestion, message_id: int) -> bool:
        """Mark the person's next message in the stored question, unless a press decided or replaced it meanwhile."""
        marked = replace(question, next_message=message_id)
        return await self.store.state.swap(scope, QUESTION, question.as_dict(), marked.as_dict(), self.clock())

    async def _since(self, scope: Scope, question: OpenQuestion, before_id: int | None = None) -> list[Message]:
        """The messages logged since the person's message the question was asked under (before `before_id`)."""
        if question.asked_under is None:
            return []
        return await self.store.messages.after(scope, question.asked_under, 200, before_id=before_id)

    async def _held_number(self, scope: Scope) -> int:
        """A new number for a held call's question in this scope (its buttons carry it)."""
        number = int(await self.store.state.get(scope, HELD_NUMBER) or 0) + 1
        await self.store.state.put(scope, HELD_NUMBER, number, self.clock())
        return number

    async def _still_open(self, scope: Scope, question: OpenQuestion) -> bool:
        """Whether the question's rule or profile fact still waits (a button may have decided it meanwhile)."""
        if question.kind == "tool":
            return True  # a held call lives only in the question
        try:
            if question.kind == "rule":
                return (await self.store.rules.get(scope, question.item_id)).status == "pending"
        except NotFound:
            return False
        return await self.store.profile.is_pending(scope, question.item_id)

    async def _drop(self, scope: Scope, question: OpenQuestion) -> None:
        """An unanswered question that expired or was replaced: nothing of it is kept."""
        if question.kind == "tool":
            log.info("held call of %s dropped unanswered: not run", (question.call or {}).get("tool"))
            return
        try:
            if question.kind == "rule":  # nobody said no: nothing of it is kept, never 'rejected'
                await self.store.rules.discard_pending(scope, question.item_id)
            elif await self.store.profile.is_pending(scope, question.item_id):
                await self.store.profile.decide(scope, question.item_id, False)
        except NotFound:
            pass  # decided and gone meanwhile
