"""The conversation engine: one message in, memory read before, a reply out, memory written after."""
from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from zoneinfo import ZoneInfo

from bot.channels.streaming import preview_text
from bot.conversation.consent import yes_or_no
from bot.conversation.markers import Marker, split_markers
from bot.conversation.prompt import PromptContext, build_prompt, own_questions, quote
from bot.conversation.ratelimit import RateLimiter
from bot.conversation.reminder_requests import ReminderRequests
from bot.conversation.replies import Button, Document, Incoming, Reply  # noqa: F401  (channels import them from here too)
from bot.conversation.safety import signals_crisis
from bot.conversation.tools import SAFE_TOOLS, TOOLS, recall_window, run_tool, transcript_lines
from bot.errors import LLMError
from bot.learning import extraction, summary
from bot.learning.corrections import Change, correct, describe, looks_like_correction, propose_rule
from bot.learning.why import asks_why, explain
from bot.llm.port import LLM, ChatMessage, Completion, OnText, SystemBlock
from bot.texts import crisis_help, profile_key, t
from memory.admission import Thresholds
from memory.embedder import calibration
from memory.errors import NotFound
from memory.models import LearnedRule, Message, Scope, Source
from memory.pairing import is_group_scope
from memory.store import MemoryStore
from scheduler.budget import TokenBudget
from scheduler.topics import topic_raised

log = logging.getLogger(__name__)

MAX_TOOL_ROUNDS = 4
MAX_BUBBLES = 3
QUESTION = "question"  # the scope_state key of the open yes/no question
QUESTION_HOURS = 24.0  # an unanswered question is dropped after this long
CRISIS_SCAN_CHARS = 20_000  # how much of a (maybe oversized) message is searched for signs of crisis
CRISIS_MEMORY_SECONDS = 3 * 86400.0  # a message the companion sends on its own this soon after a crisis is careful


@dataclass(frozen=True)
class OpenQuestion:
    """The yes/no question waiting under the companion's message: a proposed rule or a profile fact."""

    kind: str  # "rule" | "profile"
    item_id: int
    asked_at: float
    owner: str | None = None  # who was asked (in a group, only they may answer)
    number: int = 0  # the person's own number of the rule or fact, which its buttons carry

    @property
    def key(self) -> str:
        """The question's name in buttons and choices ('rule:3', by the person's own number)."""
        return f"{self.kind}:{self.number}"

    def as_dict(self) -> dict[str, object]:
        """The question as JSON-ready data for the scope's state."""
        return {"kind": self.kind, "item_id": self.item_id, "asked_at": self.asked_at, "owner": self.owner,
                "number": self.number}


def question_expired(asked_at: float, now: float, hours: float = QUESTION_HOURS) -> bool:
    """Whether a question asked at `asked_at` has waited too long for its answer."""
    return now - asked_at >= hours * 3600


@dataclass(frozen=True)
class Turn:
    """One message being answered: its scope, what came in, its logged id, and what the program knows of it."""

    scope: Scope
    incoming: Incoming
    message_id: int
    previous_at: float | None  # when the person wrote before this message
    crisis: bool
    closes: list[str] = field(default_factory=list)  # questions dropped in this turn (expired, replaced)


@dataclass(frozen=True)
class EngineConfig:
    """The settings the engine needs."""

    companion_id: str = "mnemo"
    companion_name: str = "Mnemo"
    persona: str = ""
    language: str = "de"
    zone: ZoneInfo = field(default_factory=lambda: ZoneInfo("Europe/Berlin"))
    recent_messages: int = 12
    max_message_chars: int = 4000
    relevance_floor: float | None = None
    crisis_country: str = "DE"
    use_tools: bool = True
    extraction: str = "after_reply"
    extraction_quiet_seconds: float = 120.0
    profile_consent: bool = False
    admission: Thresholds | None = field(default_factory=Thresholds)  # None: every extracted note is stored
    rate_limit_per_minute: float = 0.0  # messages a user may send per minute (and at once); 0: no limit


_DIARY_QUESTION = re.compile(
    r"\b(tagebuch\w*|einträge|eintrag|diary|entries)\b.*\?|\bwas\s+hast\s+du\s+zuletzt\s+geschrieben"
    r"|\bwhat\s+did\s+you\s+(last\s+)?write", re.IGNORECASE)


def asks_about_diary(text: str) -> bool:
    """True for questions about the companion's diary ('wie viele Einträge hast du?')."""
    return bool(_DIARY_QUESTION.search(text))


def rule_buttons(number: int, lang: str) -> tuple[Button, ...]:
    """The yes/no buttons under a rule question, by the user's own number of the rule."""
    return (Button(t(lang, "yes"), f"rule:yes:{number}"), Button(t(lang, "no"), f"rule:no:{number}"))


def split_bubbles(text: str, limit: int = MAX_BUBBLES) -> tuple[str, ...]:
    """Split a reply at blank lines into at most `limit` bubbles (the last one takes the rest)."""
    parts = [p.strip() for p in text.split("\n\n") if p.strip()]
    if len(parts) <= limit:
        return tuple(parts)
    return tuple(parts[: limit - 1]) + ("\n\n".join(parts[limit - 1 :]),)


_SURROGATE = re.compile("[\ud800-\udfff]")


def check_input(text: str, limit: int) -> str | None:
    """Why a message is refused ('too_long', 'not_text', 'empty'), or None when it is fine."""
    if len(text) > limit:
        return "too_long"
    if "\x00" in text or sum(1 for c in text if ord(c) < 32 and c not in "\n\r\t") > max(3, len(text) // 20):
        return "not_text"
    if _SURROGATE.search(text):  # half of a UTF-16 pair: not text, and no database could store it
        return "not_text"
    if not text.strip():
        return "empty"
    return None


def own_words(text: str, group: bool) -> str:
    """What the sender typed: in a group the channel puts their name in front ('Anna: ja')."""
    return text.split(": ", 1)[1] if group and ": " in text else text


def _closing(reply: Reply, turn: Turn) -> Reply:
    """The reply with the questions this turn dropped or replaced added to what it closes."""
    closes = tuple(dict.fromkeys((*turn.closes, *reply.closes)))
    return replace(reply, closes=closes) if closes != reply.closes else reply


def heard_text(ctx: PromptContext, system: Sequence[SystemBlock], messages: Sequence[ChatMessage]) -> str:
    """Everything the model is given for this turn, raw and as sent: the user's words, earlier messages, memory."""
    raw = [ctx.user_text] + [m.text for m in ctx.window] + [m.text for m in ctx.pinned]
    return "\n".join(raw + [b.text for b in system] + [m.content for m in messages])


def _previewer(on_progress: OnText | None, user_text: str) -> OnText | None:
    """An on_text for the chat model that hands on only what may be shown (no markers, nothing empty)."""
    if on_progress is None:
        return None
    progress = on_progress

    async def show(text: str) -> None:
        visible = preview_text(text, user_text)
        if visible:
            await progress(visible)

    return show


class Engine:
    """Handles each message: log first, recall, ask the model (with tools), reply, learn in the background."""

    def __init__(
        self, store: MemoryStore, chat: LLM, background: LLM, config: EngineConfig,
        clock: Callable[[], float] = time.time, budget: TokenBudget | None = None,
    ) -> None:
        self.store = store
        self.chat = chat
        self.background = background
        self.config = config
        self.clock = clock
        self.budget = budget  # the daily token budget that pauses extraction and summaries when spent
        self.limiter = RateLimiter(config.rate_limit_per_minute, clock=clock)
        self.floor = config.relevance_floor
        if self.floor is None:
            self.floor = calibration(store.index.embedder.name).relevant
        self._tasks: set[asyncio.Task[object]] = set()
        self._proposed: dict[int, LearnedRule] = {}  # a rule proposed during the turn being answered
        self.reminder_requests = ReminderRequests(store, config.language, config.zone, clock)
        self._quiet: dict[int, tuple[asyncio.TimerHandle, Scope]] = {}
        self.last_prompt: tuple[list[SystemBlock], list[ChatMessage]] | None = None

    async def scope_for(self, user_id: str) -> Scope:
        """The scope of this companion and the user."""
        return await self.store.scope(self.config.companion_id, user_id)

    async def handle(self, incoming: Incoming, on_progress: OnText | None = None) -> Reply | None:
        """Answer one message; None when this message (by its channel id) was answered before.

        A message that was logged but not answered (the process stopped in between) is answered now,
        without logging it twice. With on_progress, the reply's visible text so far is handed over
        while the model writes its final answer (never in a crisis: that answer arrives whole).
        """
        lang = self.config.language
        crisis = signals_crisis(incoming.text[:CRISIS_SCAN_CHARS])
        problem = check_input(incoming.text, self.config.max_message_chars)
        if problem:
            refusal = t(lang, problem, size=len(incoming.text), limit=self.config.max_message_chars)
            help_lines = (crisis_help(self.config.crisis_country, lang),) if crisis else ()
            return Reply(help_lines + (refusal,), failed=True)  # too long, but never without help in a crisis
        scope = await self.scope_for(incoming.user_id)
        message = await self._logged_before(scope, incoming)
        if message is not None and await self._answered(scope, incoming):
            return None
        if message is None and not crisis and (verdict := self.limiter.check(incoming.user_id)) != "pass":
            log.info("rate limit: message from %s neither read nor stored", incoming.user_id)
            return Reply((t(lang, "rate_limited"),) if verdict == "tell" else (), failed=True)
        previous = await self.store.messages.last_user_message(scope, before_id=message.id if message else None)
        if message is None:
            message = await self.store.messages.add(
                scope, "user", incoming.text, channel=incoming.channel,
                channel_message_id=incoming.channel_message_id, created_at=self.clock(),
            )
        turn = Turn(scope, incoming, message.id, previous.created_at.timestamp() if previous else None, crisis)
        self._proposed.pop(scope.id, None)
        if turn.crisis:  # crisis first, always: no open question, reminder or correction takes this message
            return await self._crisis(turn)
        for step in (self._answer_question, self._reminder_request, self._why):
            reply = await step(turn)
            if reply is not None:
                return _closing(reply, turn)
        return _closing(await self._conversation(turn, on_progress), turn)

    async def _crisis(self, turn: Turn) -> Reply:
        """A message with signs of crisis: the model with the safety rules, the help lines, nothing else.

        No question is asked or decided, no reminder confirmed, no memory corrected, nothing streamed;
        when the model fails, the help lines still go out.
        """
        lang, scope = self.config.language, turn.scope
        help_text = crisis_help(self.config.crisis_country, lang)
        try:
            text = await self._answer(scope, turn.incoming.text, turn.message_id, turn.previous_at, crisis=True)
        except LLMError as exc:
            log.warning("chat model failed for a crisis message %s: %s", turn.message_id, exc)
            text = t(lang, "crisis_model_down")
        if help_text not in text:
            text = f"{text}\n\n{help_text}" if text else help_text
        bubbles = split_bubbles(text) or (help_text,)
        await self._log_reply(scope, turn.incoming, "\n\n".join(bubbles))
        self._after_reply(scope)
        return Reply(bubbles)

    async def _answer_question(self, turn: Turn) -> Reply | None:
        """A typed yes or no decides the open question; any other message leaves it open (None)."""
        question = await self.open_question(turn.scope, turn)
        if question is None:
            return None
        verdict = yes_or_no(own_words(turn.incoming.text, is_group_scope(turn.scope.user_id)))
        if verdict is None or not self._may_decide(turn, question):
            return None
        text = await self._decide(turn.scope, question, verdict, turn.incoming.text)
        await self._log_reply(turn.scope, turn.incoming, text)
        return Reply((text,), closes=(question.key,))

    def _may_decide(self, turn: Turn, question: OpenQuestion) -> bool:
        """Whether the sender may answer: in a group only an admin, and only the one who was asked."""
        if not turn.incoming.may_decide:
            return False
        sender = turn.incoming.sender or turn.incoming.user_id
        return not is_group_scope(turn.scope.user_id) or question.owner in (None, sender)

    async def _decide(self, scope: Scope, question: OpenQuestion, verdict: str, reason: str) -> str:
        """Apply a yes or no to the open question and close it; the sentence that says what happened."""
        lang = self.config.language
        await self.store.state.pop(scope, QUESTION)
        if question.kind == "rule":
            rule = await self.store.rules.decide(scope, question.item_id, "active" if verdict == "yes" else "rejected",
                                                 reason=reason)
            return t(lang, "rule_saved", rule=rule.text) if verdict == "yes" else t(lang, "rule_dropped")
        fact = await self.store.profile.decide(scope, question.item_id, verdict == "yes")
        if verdict == "no":
            return t(lang, "rule_dropped")
        return t(lang, "profile_saved", fact=f"{profile_key(fact.key, lang)}: {fact.value}")

    async def open_question(self, scope: Scope, turn: Turn | None = None) -> OpenQuestion | None:
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

    async def _still_open(self, scope: Scope, question: OpenQuestion) -> bool:
        """Whether the question's rule or profile fact still waits (a button may have decided it meanwhile)."""
        try:
            if question.kind == "rule":
                return (await self.store.rules.get(scope, question.item_id)).status == "pending"
        except NotFound:
            return False
        return await self.store.profile.is_pending(scope, question.item_id)

    async def _drop(self, scope: Scope, question: OpenQuestion) -> None:
        """An unanswered question that expired or was replaced: nothing of it is kept."""
        try:
            if question.kind == "rule":
                if (await self.store.rules.get(scope, question.item_id)).status == "pending":
                    await self.store.rules.decide(scope, question.item_id, "rejected", reason="no answer")
            elif await self.store.profile.is_pending(scope, question.item_id):
                await self.store.profile.decide(scope, question.item_id, False)
        except NotFound:
            pass  # decided and gone meanwhile

    async def _reminder_request(self, turn: Turn) -> Reply | None:
        """A reminder request is answered without the model (its time computed by the program)."""
        reminded = await self.reminder_requests.answer(turn.scope, turn.incoming.text)
        if reminded is not None:
            await self._log_reply(turn.scope, turn.incoming, "\n\n".join(reminded.bubbles))
        return reminded

    async def _why(self, turn: Turn) -> Reply | None:
        """'Why do you think that?' after an answer that used notes: the notes and where they came from."""
        if not asks_why(turn.incoming.text):
            return None
        notes = await self.last_notes(turn.scope)
        if not notes:
            return None
        reply = await explain(self.store, turn.scope, notes, self.config.language, await self.zone_for(turn.scope))
        await self._log_reply(turn.scope, turn.incoming, reply.bubbles[0])
        return reply

    async def last_notes(self, scope: Scope) -> list[int]:
        """The notes the last answer was given (what /why explains)."""
        return [int(i) for i in await self.store.state.get(scope, "why") or []]

    async def zone_for(self, scope: Scope) -> ZoneInfo:
        """The user's own time zone, or the deployment's."""
        prefs = await self.store.preferences.get(scope)
        return ZoneInfo(prefs.timezone) if prefs.timezone else self.config.zone

    async def _conversation(self, turn: Turn, on_progress: OnText | None) -> Reply:
        """An ordinary message: corrections, the model's answer, then a new question if one came up."""
        lang, scope, text_in = self.config.language, turn.scope, turn.incoming.text
        objection = looks_like_correction(text_in)
        may_change = turn.incoming.may_decide  # in a group only an admin's words correct the group's memory
        changes = await self._correct(scope, text_in, turn.message_id) if objection and may_change else []
        extra: tuple[str, ...] = (f"You just corrected your memory because of this message:\n"
                                  f"{describe(changes, 'en')}\nSay briefly what you changed.",) if changes else ()
        if asks_about_diary(text_in):
            extra += (await self._diary_facts(scope),)
        try:
            text = await self._answer(scope, text_in, turn.message_id, turn.previous_at, extra, on_progress)
        except LLMError as exc:
            log.warning("chat model failed for message %s: %s", turn.message_id, exc)
            return Reply((t(lang, "model_down"),), failed=True)
        if changes:
            text = f"{text}\n\n{describe(changes, lang)}"
        elif objection and scope.id not in self._proposed:
            await self._rule_from_objection(scope, text_in, turn.message_id)
        topic = await self.store.state.pop(scope, "due_topic")
        if topic is not None and topic_raised(text, topic["text"]):
            await self.store.topics.set_status(scope, int(topic["id"]), "raised")
        reply = await self._with_question(turn, split_bubbles(text) or (t(lang, "empty"),))
        await self._log_reply(scope, turn.incoming, "\n\n".join(reply.bubbles))  # with its question, for a replay
        self._after_reply(scope)
        return reply

    async def earlier_reply(self, incoming: Incoming) -> Reply | None:
        """The reply recorded for a message answered before, to deliver it again after a crash; None if none.

        When that reply asked the question that is still open, its buttons come with it again.
        """
        if incoming.channel_message_id is None:
            return None
        scope = await self.scope_for(incoming.user_id)
        recorded = await self.store.messages.reply_to(scope, incoming.channel, incoming.channel_message_id)
        if recorded is None:
            return None
        reply = Reply(split_bubbles(recorded.text) or (recorded.text,))
        question = await self.open_question(scope)
        if question is not None:
            text, buttons = await self._asking(scope, question)
            if recorded.text.endswith(text):
                reply = replace(reply, buttons=(buttons,))
        return reply

    async def _logged_before(self, scope: Scope, incoming: Incoming) -> Message | None:
        """The user message logged earlier under this channel id, if any."""
        if incoming.channel_message_id is None:
            return None
        return await self.store.messages.by_channel_id(scope, incoming.channel, incoming.channel_message_id)

    async def _answered(self, scope: Scope, incoming: Incoming) -> bool:
        """Whether a reply to this message was recorded."""
        assert incoming.channel_message_id is not None  # only messages with a channel id are looked up
        return await self.store.messages.reply_to(scope, incoming.channel, incoming.channel_message_id) is not None

    async def _log_reply(self, scope: Scope, incoming: Incoming, text: str) -> None:
        """Record the reply, tied to the message it answers, so a restart knows it was answered."""
        await self.store.messages.add(scope, "assistant", text, channel=incoming.channel,
                                      channel_message_id=incoming.channel_message_id, created_at=self.clock())

    async def _with_question(self, turn: Turn, bubbles: tuple[str, ...]) -> Reply:
        """Ask one yes/no question under the reply: a rule proposed in this turn, else a profile fact waiting.

        A new rule replaces an open question (whose buttons go); a profile fact is asked only while no
        question is open, so a question is never asked again on every reply.
        """
        scope = turn.scope
        rule = self._proposed.pop(scope.id, None)
        open_now = await self.open_question(scope, turn)
        # Who may answer: the one who asked; a group member who is no admin cannot, so then any admin may.
        owner = (turn.incoming.sender or turn.incoming.user_id) if turn.incoming.may_decide else None
        if rule is not None:
            if open_now is not None:
                await self.store.state.pop(scope, QUESTION)
                turn.closes.append(open_now.key)
            number = await self.store.numbers.of(scope, "rule", rule.id)
            question = OpenQuestion("rule", rule.id, self.clock(), owner, number)
        elif open_now is None and turn.incoming.may_decide and (fact := await self.store.profile.pending(scope)):
            question = OpenQuestion("profile", fact.id, self.clock(), owner,
                                    await self.store.numbers.of(scope, "profile", fact.id))
        else:
            return Reply(bubbles)
        text, buttons = await self._asking(scope, question)
        await self.store.state.put(scope, QUESTION, question.as_dict(), self.clock())
        return Reply(split_bubbles("\n\n".join(bubbles) + "\n\n" + text), buttons=(buttons,))

    async def _asking(self, scope: Scope, question: OpenQuestion) -> tuple[str, tuple[Button, ...]]:
        """The sentence that asks a question and its yes/no buttons (by the person's own number)."""
        lang, number = self.config.language, question.number
        if question.kind == "rule":
            rule = await self.store.rules.get(scope, question.item_id)
            return t(lang, "rule_question", rule=rule.text), rule_buttons(number, lang)
        fact = await self.store.profile.pending_fact(scope, question.item_id)
        text = t(lang, "profile_question", fact=f"{profile_key(fact.key, lang)}: {fact.value}")
        return text, (Button(t(lang, "yes"), f"profile:yes:{number}"), Button(t(lang, "no"), f"profile:no:{number}"))

    async def compose_proactive(self, scope: Scope, reason: str, detail: str) -> str:
        """Write a message the companion sends on its own, with the normal prompt plus the reason."""
        last = await self.store.messages.last_user_message(scope)
        careful = await self._crisis_lately(scope)
        ctx = await self._context(scope, detail or reason, 1 << 62, last.created_at.timestamp() if last else None,
                                  crisis=careful)
        ctx = replace(ctx, user_text="", proactive=f"{reason}: {detail}")
        system, messages = build_prompt(ctx)
        completion = await self.chat.complete(messages, system=system, tools=None)
        return split_markers(completion.text)[0]

    async def _crisis_lately(self, scope: Scope) -> bool:
        """Whether the person showed signs of crisis in the last days (a check-in then speaks with the safety rules)."""
        since = self.clock() - CRISIS_MEMORY_SECONDS
        recent = await self.store.messages.recent(scope, 40)
        return any(m.role == "user" and m.created_at.timestamp() >= since and signals_crisis(m.text) for m in recent)

    async def _diary_facts(self, scope: Scope) -> str:
        """What the database says about the diary, so the answer does not depend on a lookup."""
        count = await self.store.diary.count(scope)
        latest = await self.store.diary.latest(scope, 1)
        fact = f"Diary facts from the database: you have written {count} diary entries."
        if latest:
            fact += f" The latest ({latest[0].day}) says: {quote(latest[0].text, 600)}"
        return fact

    async def _previous_reply(self, scope: Scope, message_id: int) -> str:
        before = await self.store.messages.recent(scope, 4, before_id=message_id)
        return next((m.text for m in reversed(before) if m.role == "assistant"), "")

    async def _correct(self, scope: Scope, text: str, message_id: int) -> list[Change]:
        """Run the correction judge; a failing judge changes nothing."""
        try:
            previous = await self._previous_reply(scope, message_id)
            return await correct(self.store, self.background, scope, text, previous)
        except LLMError as exc:
            log.warning("correction judge failed; nothing changed: %s", exc)
            return []

    async def _rule_from_objection(self, scope: Scope, text: str, message_id: int) -> None:
        """The user objected and no memory changed: one call proposes a behaviour rule (maybe none)."""
        try:
            previous = await self._previous_reply(scope, message_id)
            rule = await propose_rule(self.background, text, previous, self.store.failures)
        except LLMError as exc:
            log.warning("rule proposal failed: %s", exc)
            return
        if rule:
            await self._propose_rule(scope, rule)

    async def _context(self, scope: Scope, user_text: str, message_id: int, previous_at: float | None,
                       crisis: bool = False) -> PromptContext:
        store, now, zone = self.store, self.clock(), await self.zone_for(scope)
        window = await store.messages.recent(scope, self.config.recent_messages, before_id=message_id)
        due = [] if crisis else await store.topics.due(scope, now, limit=1)
        return PromptContext(
            companion_name=self.config.companion_name, language=self.config.language, user_text=user_text,
            now_local=datetime.fromtimestamp(now, zone), persona=self.config.persona,
            profile=await store.profile.list(scope), rules=await store.rules.list(scope, "active"),
            notes=await store.search(scope, user_text, ("note",), k=5, now=now, min_cosine=self.floor, use=True),
            thoughts=await store.search(scope, user_text, ("thought",), k=3, now=now, min_cosine=self.floor),
            pinned=[m for m in await store.messages.first(scope, 2) if m.id < message_id],
            summary=(await store.conversations.get(scope)).summary,
            window=window,
            previous_user_at=datetime.fromtimestamp(previous_at, zone) if previous_at else None,
            due_topic=due[0] if due else None,
            crisis_notice=crisis_help(self.config.crisis_country, self.config.language) if crisis else "",
            tools=self.config.use_tools,
            companion=await store.companions.get(self.config.companion_id),
            relationship=await store.relationships.get(scope),
            own_questions=own_questions(window),
            people=await store.people.cards(scope),
            zone=zone,
        )

    async def _answer(
        self, scope: Scope, user_text: str, message_id: int, previous_at: float | None, extra: tuple[str, ...] = (),
        on_progress: OnText | None = None, *, crisis: bool = False,
    ) -> str:
        ctx = await self._context(scope, user_text, message_id, previous_at, crisis)
        ctx = replace(ctx, extra=extra)
        await self.store.state.put(scope, "why", [h.item_id for h in ctx.notes], self.clock())
        if ctx.due_topic is not None:
            await self.store.state.put(scope, "due_topic", {"id": ctx.due_topic.id, "text": ctx.due_topic.text})
        system, messages = build_prompt(ctx)
        self.last_prompt = (system, list(messages))
        looked_up: list[str] = []
        on_text = _previewer(on_progress, user_text)
        heard = heard_text(ctx, system, messages)  # markers in it were typed or stored, never the model's own
        tools = (SAFE_TOOLS if crisis else TOOLS) if self.config.use_tools else None
        zone = ctx.zone or self.config.zone
        for _ in range(MAX_TOOL_ROUNDS):
            completion = await self.chat.complete(messages, system=system, tools=tools, on_text=on_text)
            text, markers = split_markers(completion.text, heard)
            recalls = [m for m in markers if m.kind == "recall"]
            await self._keep(scope, [m for m in markers if m.kind != "recall" and not (crisis and m.kind == "rule")])
            if completion.tool_calls:
                messages = messages + [ChatMessage("assistant", completion.text, tool_calls=completion.tool_calls)]
                for call in completion.tool_calls:
                    if call.name == "propose_rule" and not crisis:
                        result = await self._propose_rule(scope, str(call.arguments.get("rule", "")))
                    else:
                        result = await run_tool(self.store, scope, call, zone, message_id, self.clock())
                    looked_up.append(f"{call.name}({call.arguments})")
                    messages.append(ChatMessage("tool", result, tool_call_id=call.id))
                    heard += "\n" + result
                continue
            if recalls and not text:
                found = [await self._recall(scope, m.content, message_id, zone) for m in recalls]
                looked_up += [m.content for m in recalls]
                heard += "\n" + "\n".join(found)
                messages = messages + [ChatMessage("assistant", completion.text),
                                       ChatMessage("user", "<lookup>\n" + "\n\n".join(found) + "\n</lookup>")]
                continue
            return text
        return await self._final_without_tools(messages, system, heard, on_text)

    async def _final_without_tools(self, messages: list[ChatMessage], system: list[SystemBlock], heard: str,
                                   on_text: OnText | None = None) -> str:
        """After the last tool round, ask once more for a plain answer."""
        completion: Completion = await self.chat.complete(messages, system=system, tools=None, on_text=on_text)
        return split_markers(completion.text, heard)[0]

    async def _recall(self, scope: Scope, query: str, current_id: int, zone: ZoneInfo) -> str:
        text, window = recall_window(query, None, self.clock(), zone)
        sources: tuple[Source, ...] = ("message",) if window else ("note", "profile", "thought", "person", "message")
        hits = await self.store.search(scope, text, sources, k=7, window=window, now=self.clock(),
                                       include_faded=True, use=True)
        hits = [h for h in hits if h.source != "message" or h.item_id < current_id][:6]
        return f"[{query}]\n" + await transcript_lines(self.store, scope, hits, zone, 600)

    async def _propose_rule(self, scope: Scope, text: str) -> str:
        text = " ".join(text.split())[:300]
        if not text:
            return "error: empty rule"
        self._proposed[scope.id] = await self.store.rules.propose(scope, text)
        return "The person will be asked to confirm this rule with yes/no buttons; do not ask yourself."

    async def _keep(self, scope: Scope, markers: Sequence[Marker]) -> None:
        for marker in markers:
            if marker.kind == "rule":
                await self._propose_rule(scope, marker.content)
            elif marker.kind == "thought":
                await self.store.thoughts.add(scope, marker.content, origin="conversation")
            elif marker.kind == "followup":
                await self.store.topics.add(scope, marker.content, origin="conversation")

    def _after_reply(self, scope: Scope) -> None:
        """Schedule extraction and the summary refresh: now, or when the chat has gone quiet.

        The quiet timer restarts with every reply, so in a chat without a pause each full batch of
        messages is read at once as well.
        """
        if self.config.extraction == "when_quiet":
            waiting = self._quiet.pop(scope.id, None)
            if waiting:
                waiting[0].cancel()
            handle = asyncio.get_running_loop().call_later(
                self.config.extraction_quiet_seconds, lambda: self.spawn(self._learn(scope), "learn")
            )
            self._quiet[scope.id] = (handle, scope)
            self.spawn(self._learn(scope, full_batches_only=True), "learn")
        else:
            self.spawn(self._learn(scope), "learn")

    async def _learn(self, scope: Scope, full_batches_only: bool = False) -> None:
        """Extract from every message after the cursor in batches, then fold the summary; one run per scope at a time.

        Before each model call the day's token budget is asked; when it is spent, the rest waits for the next run.
        """
        if not full_batches_only:
            self._quiet.pop(scope.id, None)

        async def budget_allows() -> bool:
            return self.budget is None or await self.budget.allows(self.clock())

        async with extraction.learning_lock(self.store, scope):
            try:
                await extraction.extract(self.store, self.background, scope, self.config.profile_consent,
                                         datetime.fromtimestamp(self.clock(), await self.zone_for(scope)),
                                         admission=self.config.admission, may_continue=budget_allows,
                                         full_batches_only=full_batches_only)
            except LLMError as exc:
                await self.store.failures.add("extraction.failed")
                log.warning("extraction failed for scope %s; the batch waits for the next run: %s", scope.id, exc)
                return
            try:
                await summary.refresh_summary(self.store, self.background, scope, self.config.recent_messages,
                                              may_continue=budget_allows)
            except LLMError as exc:
                await self.store.failures.add("summary.failed")
                log.warning("summary refresh failed for scope %s; the summary is kept: %s", scope.id, exc)

    @contextlib.asynccontextmanager
    async def learning_paused(self, scope: Scope) -> AsyncIterator[None]:
        """Run a block while no learning runs for the scope: /deleteme and /forget wait for an extraction in
        flight (which would otherwise store what they erase right after them) and drop its quiet timer."""
        waiting = self._quiet.pop(scope.id, None)
        if waiting:
            waiting[0].cancel()
        async with extraction.learning_lock(self.store, scope):
            yield

    def spawn(self, coro: Awaitable[object], name: str) -> asyncio.Task[object]:
        """Run a background task; a failure is logged with where the task was created."""
        created_at = "".join(traceback.format_stack(limit=4)[:-1])
        task: asyncio.Task[object] = asyncio.ensure_future(coro)
        task.set_name(name)
        self._tasks.add(task)

        def done(finished: asyncio.Task[object]) -> None:
            self._tasks.discard(finished)
            if not finished.cancelled() and finished.exception() is not None:
                log.error("background task %s failed; created at:\n%s", name, created_at,
                          exc_info=finished.exception())

        task.add_done_callback(done)
        return task

    async def drain(self) -> None:
        """Wait until every background task has finished (quiet-timers fire first)."""
        waiting = list(self._quiet.values())
        self._quiet.clear()
        for handle, scope in waiting:
            handle.cancel()
            self.spawn(self._learn(scope), "learn")
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def close(self) -> None:
        """Cancel background work."""
        for handle, _scope in self._quiet.values():
            handle.cancel()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*list(self._tasks), return_exceptions=True)
