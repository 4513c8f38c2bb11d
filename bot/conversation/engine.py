"""The conversation engine: one message in, its turn as a list of named steps, a reply out, learning after it.

The order of a turn stands in one place, `Engine.steps`: each step answers the message (a Reply) or passes
it on (None). The parts live beside this module: the turn (turn.py), the open question (questions.py), the
model's answer with tools and markers (model_answer.py, tools.py), voice notes (voice_notes.py), photos
(photo_steps.py), reactions (reaction_steps.py), incognito turns (incognito.py), learning after the reply
(learning_runs.py).
"""
from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from functools import partial
from zoneinfo import ZoneInfo

from bot.conversation.absence import Absences
from bot.conversation.bubbles import split_bubbles
from bot.conversation.config import EngineConfig
from bot.conversation.crisis_judge import CrisisJudge
from bot.conversation.document_steps import DocumentSteps, logged_text
from bot.conversation.failures import failure_text, log_words
from bot.conversation.help_first import HelpFirst
from bot.conversation.incognito_turns import IncognitoTurns
from bot.conversation.intake import own_words
from bot.conversation.learning_runs import LearningRuns
from bot.conversation.model_answer import ModelAnswers, Prompt, asks_about_diary
from bot.conversation.person import Person, meet, person_of
from bot.conversation.photo_steps import PhotoSteps
from bot.conversation.questions import OpenQuestion, OpenQuestions, question_expired, rule_buttons
from bot.conversation.ratelimit import RateLimiter
from bot.conversation.reaction_steps import ReactionSteps
from bot.conversation.reminder_requests import ReminderRequests, user_zone
from bot.conversation.replays import answered, earlier_reply, logged_before
from bot.conversation.sources import with_sources
from bot.conversation.tools import HeldCall, ToolBox, ToolContext, available, run_held
from bot.conversation.topics import topic_raised
from bot.conversation.turn import ANSWERED_BEFORE, SayNow, Step, Turn, check_input, opened
from bot.conversation.voice_notes import VoiceNotes
from bot.conversation.why import asks_why, explain
from bot.errors import LLMError
from bot.exchange import Button, Document, Incoming, Reply
from bot.learning.corrections import Change, correct, describe, looks_like_correction, propose_rule
from bot.llm.port import LLM, Image, OnText
from bot.metrics import NO_METRICS, Metrics
from bot.texts import t
from bot.voice.port import Speaker, Transcriber
from memory import MemoryStore, Scope
from scheduler.budget import TokenBudget

__all__ = [  # the engine's public face, as tests and benchmarks import it
    "Button", "Document", "Engine", "EngineConfig", "Incoming", "OpenQuestion", "Reply", "check_input",
    "own_words", "question_expired", "rule_buttons", "split_bubbles",
]

log = logging.getLogger(__name__)


async def _no_rule(text: str) -> str:
    """No rule is proposed while a held call runs."""
    return "error: no rule can be proposed here"


class Engine:
    """Handles each message: log first, recall, ask the model (with tools), reply, learn in the background."""

    def __init__(
        self, store: MemoryStore, chat: LLM, background: LLM, config: EngineConfig,
        clock: Callable[[], float] = time.time, budget: TokenBudget | None = None,
        toolboxes: Sequence[ToolBox] = (), transcriber: Transcriber | None = None, speaker: Speaker | None = None,
        metrics: Metrics = NO_METRICS,
    ) -> None:
        self.store, self.chat, self.background, self.config, self.clock = store, chat, background, config, clock
        self.metrics = metrics  # what the channels count of the turns they run through it (bot/metrics.py)
        self.budget = budget  # the daily token budget that pauses extraction and summaries when spent
        self.limiter = RateLimiter(config.rate_limit_per_minute, clock=clock)
        self.floor = config.relevance_floor
        if self.floor is None:
            self.floor = store.calibration.relevant
        # a crisis turn's help text, before anything else happens in it; MNEMO_CRISIS_JUDGE: the background model
        # judges the fast layers' close calls, in parallel with the turn
        self.help = HelpFirst(store, clock, CrisisJudge(background, config.crisis_judge_timeout, store.failures.add)
                              if config.crisis_judge else None)
        self.help_first = self.help.send
        self.questions = OpenQuestions(store, config.language, clock, self._run_held)
        self.absences = Absences(store)
        self.reminder_requests = ReminderRequests(store, config.language, config.zone, clock)
        self.answers = ModelAnswers(store, chat, config, clock, self.floor, self.zone_for, toolboxes)
        self.learning = LearningRuns(store, background, config, self.zone_for, clock, budget)
        # voice notes heard (and kept, with MNEMO_VOICE_KEEP), replies spoken (when set up)
        self.voice = VoiceNotes(store, config, transcriber, speaker, clock, self.help_first)
        self.photos = PhotoSteps(store, chat, config, self._write)  # pictures checked, seen with the answer, described
        # PDFs and text files read for this turn's answer, their whole text checked for signs of crisis
        self.documents = DocumentSteps(config, self.help_first, store.failures.add)
        self.reactions = ReactionSteps(store, config, clock, self.scope_for, self.zone_for)  # emoji both ways
        self.feedback, self.delivered = self.reactions.feedback, self.reactions.delivered  # for the channels
        self.incognito = IncognitoTurns(store, config, clock, self.answers, self.questions, self.zone_for, self.help)
        self.spawn = self.learning.spawn  # run a background task; a failure is logged with where it was created
        # A message's turn, in order: each step answers here (a reply) or passes on (None) to the next.
        self.steps: tuple[Step, ...] = (
            self._duplicate,  # answered before (by its channel id): no second answer
            self.help.step,  # passes on: signs of crisis in the words: the help text now (a close call: judge asked)
            self._input_check,  # no text (too long, binary, empty): refused (after the help text in a crisis)
            self._incognito,  # incognito: answered from the memory as it is, nothing of the message kept
            self.voice.hear,  # a voice note: its transcript is the text from here on (a crisis in it is never limited)
            self.help.step,  # passes on: signs of crisis in the transcript: the help text now (a close call: judge)
            self._rate_limit,  # too many messages: refused, neither read nor stored
            self.photos.check,  # a picture too large, of another kind or damaged: refused (a crisis goes on without it)
            self.documents.read,  # a document read (its whole text checked for crisis: help first), or why not said
            self._log,  # passes on: the message is logged before anything is decided
            self.voice.keep,  # passes on: a heard voice note's audio kept beside its message (MNEMO_VOICE_KEEP)
            self.help.judged,  # passes on: the judge's verdict on a close call (MNEMO_CRISIS_JUDGE); a yes: help now
            self._crisis,  # signs of crisis: the model with the safety rules (the help text went out first)
            self._logged(self.photos.unseen),  # a photo without words, and a model that cannot see: one sentence
            self._logged(self._open_question),  # the very next message, a clear yes or no: decides the open question
            self._logged(self._reminder_request),  # a reminder request: set by the program, or asked back
            self._logged(self._why),  # "why do you think that?": the notes behind the last answer
            self._absence,  # passes on: an absence announced ("zwei Wochen im Urlaub") or ended is noted
            self._correction,  # passes on: an objection corrects the memory first
            self.reactions.offer,  # passes on: whether the companion may put an emoji on the message (a few a day)
            self._model_answer,  # the model writes the answer (with tools); a failing model: refused
            self._rule_from_objection,  # passes on: an objection that changed nothing may become a rule
            self.questions.ask,  # passes on: a proposed rule or a waiting profile fact is asked under the reply
            self.reactions.give,  # passes on: the emoji the model chose goes on the person's message, when it may
            self.voice.speak,  # passes on: the reply spoken too, when /voice says so (never a crisis answer)
            self._after_reply,  # the reply is logged and learning scheduled
        )

    @property
    def last_prompt(self) -> Prompt | None:
        """What the chat model was given for the last message (system blocks and messages)."""
        return self.answers.last_prompt

    @last_prompt.setter
    def last_prompt(self, prompt: Prompt | None) -> None:
        self.answers.last_prompt = prompt

    async def handle(self, incoming: Incoming, on_progress: OnText | None = None,
                     say_now: SayNow | None = None) -> Reply | None:
        """Answer one message; None when this message (by its channel id) was answered before.

        A message that was logged but not answered (the process stopped in between) is answered now,
        without logging it twice. With on_progress, the reply's visible text so far is handed over
        while the model writes its final answer (never in a crisis: that answer arrives whole). With say_now,
        the help text of a crisis goes out through it as a message of its own before the model is asked; without
        it, the help text is the reply's first bubble.
        """
        turn = await opened(incoming, self.config.crisis_detector, on_progress, say_now)
        try:
            for step in self.steps:
                reply = await step(turn)
                if reply is ANSWERED_BEFORE:
                    return None
                if reply is not None:
                    return turn.closing(reply)
        finally:
            if turn.judging is not None and not turn.judging.done():  # answered before the judge was awaited
                turn.judging.cancel()
        raise RuntimeError("no step answered the message")  # the last step always answers

    async def scope_for(self, user_id: str) -> Scope:
        """The scope of this companion and the user."""
        return await self.store.scope(self.config.companion_id, user_id)

    async def person(self, scope: Scope) -> Person:
        """The scope's language and help country: their own, else by their time zone, else the deployment's."""
        return await person_of(self.store, scope, self.config.language, self.config.crisis_country)

    async def meet(self, incoming: Incoming) -> None:
        """At a person's first contact, keep the language their messenger names as theirs (`person.meet`)."""
        if incoming.language:
            await meet(self.store, await self.scope_for(incoming.user_id), incoming.language)

    async def zone_for(self, scope: Scope) -> ZoneInfo:
        """The user's own time zone, or the deployment's."""
        return await user_zone(self.store, scope, self.config.zone)

    async def open_question(self, scope: Scope, turn: Turn | None = None) -> OpenQuestion | None:
        """The yes/no question waiting for an answer (one that expired or was decided elsewhere is dropped)."""
        return await self.questions.current(scope, turn)

    async def last_notes(self, scope: Scope) -> list[int]:
        """The notes the last answer was given (what /why explains)."""
        return [int(i) for i in await self.store.state.get(scope, "why") or []]

    async def earlier_reply(self, incoming: Incoming) -> Reply | None:
        """The reply recorded for a message answered before, to deliver it again after a crash (`replays`)."""
        return await earlier_reply(self.store, self.questions, await self.scope_for(incoming.user_id), incoming)

    async def compose_proactive(self, scope: Scope, reason: str, detail: str) -> str:
        """Write a message the companion sends on its own, with the normal prompt plus the reason."""
        return await self.answers.proactive(scope, reason, detail)

    def learning_paused(self, scope: Scope) -> contextlib.AbstractAsyncContextManager[None]:
        """Run a block while no learning runs for the scope on any worker (/deleteme and /forget wait for one in
        flight); the scope's learning lock (`memory.storage.learning_locks`)."""
        return self.learning.paused(scope)

    async def drain(self) -> None:
        """Wait until every background task has finished (quiet-timers fire first)."""
        await self.learning.drain()

    async def close(self) -> None:
        """Cancel background work."""
        await self.learning.close()

    async def _learn(self, scope: Scope, full_batches_only: bool = False) -> None:
        """Run the scope's learning now (what the quiet timer runs)."""
        await self.learning.learn(scope, full_batches_only)

    # --- the steps of a turn, in their order ------------------------------------------------------

    async def _input_check(self, turn: Turn) -> Reply | None:
        """A message that is no text is refused (in a crisis after the help text; a voice note's caption and
        transcript are checked once it is heard)."""
        text, limit, lang = turn.incoming.text, self.config.max_message_chars, turn.lang
        if turn.incoming.attachment is not None and turn.incoming.attachment.kind == "voice":
            return None
        problem = check_input(text, limit)
        if problem is None or problem == "empty" and turn.brings_file:  # a photo or a document needs no caption
            return None
        return Reply((t(lang, problem, size=len(text), limit=limit),), failed=True)

    async def _duplicate(self, turn: Turn) -> Reply | None:
        """Find the scope and the message if it was logged before; one that was answered too gets no answer."""
        turn.found_scope = await self.scope_for(turn.incoming.user_id)
        person = await self.person(turn.scope)  # the help text and every word of the turn in their language
        turn.lang, turn.country = person.lang, person.country
        logged = await logged_before(self.store, turn.scope, turn.incoming)
        if logged is not None and await answered(self.store, turn.scope, turn.incoming):
            return ANSWERED_BEFORE
        turn.logged_id = logged.id if logged is not None else None
        return None

    async def _incognito(self, turn: Turn) -> Reply | None:
        """While the scope is incognito, its own short turn answers (after the checks before logging)."""
        return await self.incognito.turn(turn, (self.voice.hear, self._rate_limit, self.photos.check,
                                                self.documents.read))

    async def _rate_limit(self, turn: Turn) -> Reply | None:
        """A new message over the user's rate is neither read nor stored (a crisis and a replay always pass)."""
        if turn.logged_id is not None or turn.crisis:
            return None
        verdict = self.limiter.check(turn.incoming.user_id, turn.incoming.sent_at)
        if verdict == "pass":
            return None
        log.info("rate limit: message from %s neither read nor stored", turn.incoming.user_id)
        return Reply((t(turn.lang, "rate_limited"),) if verdict == "tell" else (), failed=True)

    async def _log(self, turn: Turn) -> None:
        """Log the message (unless a crash left it logged), count it in the rhythm, note when they wrote before."""
        incoming = turn.incoming
        previous = await self.store.messages.last_user_message(turn.scope, before_id=turn.logged_id)
        turn.previous_at = previous.created_at.timestamp() if previous else None
        turn.previous_id = previous.id if previous else None
        if turn.logged_id is None:
            checkin = await self.store.messages.last_proactive(turn.scope)
            message = await self.store.messages.add(
                turn.scope, "user", logged_text(turn, turn.lang), channel=incoming.channel,
                channel_message_id=incoming.channel_message_id, created_at=self.clock(), origin=turn.origin,
            )
            turn.logged_id = message.id
            # the rhythm learns when the person writes, and when they answer a check-in (the first message after it)
            answered = checkin is not None and (previous is None or checkin.id > previous.id)
            await self.store.rhythm.observe(turn.scope, message.created_at.timestamp(), await self.zone_for(turn.scope),
                                            answered)
        await self.help.record(turn)  # the help text sent before the message was logged, logged after it
        await self.questions.note(turn)  # the asked person's next message is the only one a typed answer counts in

    async def _crisis(self, turn: Turn) -> Reply | None:
        """A message with signs of crisis: after the help text (sent first), the model with the safety rules, nothing
        else: no question asked or decided, no reminder confirmed, no memory corrected, nothing streamed."""
        if not turn.crisis:
            return None
        turn.reply = await self.help.answer(turn, lambda asked: self._write(asked, tuple(asked.hints)))
        return await self._after_reply(turn)

    async def _open_question(self, turn: Turn) -> Reply | None:
        """A clear yes or no as the asked person's very next message decides the open question; a 'ja' under a
        picture is about the picture."""
        return None if turn.brings_file else await self.questions.answer(turn)

    async def _reminder_request(self, turn: Turn) -> Reply | None:
        """A reminder request is answered without the model (its time computed by the program); forwarded words are
        someone else's: never a request of the person's, nor the missing piece of one."""
        own = turn.intake.own
        if not own:
            return None
        return await self.reminder_requests.answer(turn.scope, own, turn.logged_id, turn.previous_id,
                                                   turn.incoming.sent_at)

    async def _why(self, turn: Turn) -> Reply | None:
        """'Why do you think that?' after an answer that used notes: the notes and where they came from."""
        if not asks_why(turn.intake.own):
            return None
        notes = await self.last_notes(turn.scope)
        if not notes:
            return None
        return await explain(self.store, turn.scope, notes, turn.lang, await self.zone_for(turn.scope))

    async def _absence(self, turn: Turn) -> None:
        """An absence the person announces (in their own words, not forwarded ones) holds check-ins back until they are
        back; the model hears the dates."""
        own = turn.intake.own
        if not own:
            return
        now = datetime.fromtimestamp(self.clock(), await self.zone_for(turn.scope))
        hint = await self.absences.note(turn.scope, own, now)
        if hint is not None:
            turn.hints.append(hint)

    async def _correction(self, turn: Turn) -> None:
        """An objection (in the person's own words: a forwarded 'das stimmt nicht' objects to nothing of theirs) goes to
        the correction judge first; in a group only an admin's words correct the memory."""
        own = turn.intake.own
        turn.objection = bool(own) and looks_like_correction(own)
        if turn.objection and turn.incoming.may_decide:
            turn.changes = await self._correct(turn)

    async def _model_answer(self, turn: Turn) -> Reply | None:
        """The model's answer, saying what the correction changed; a failing model is refused (nothing logged)."""
        lang, scope, text_in = turn.lang, turn.scope, turn.incoming.text
        extra: tuple[str, ...] = (f"You just corrected your memory because of this message:\n"
                                  f"{describe(turn.changes, 'en')}\nSay briefly what you changed.",
                                  ) if turn.changes else ()
        extra += tuple(turn.hints)
        if asks_about_diary(text_in):
            extra += (await self.answers.diary_facts(scope),)
        try:  # a plain message is answered here; a photo's answer goes with the picture (photo_steps.py)
            text = await (self.photos.answer(turn, extra) if turn.photo
                          else self._write(turn, extra, turn.on_progress, ()))
        except LLMError as exc:
            log.warning("chat model failed for message %s: %s", turn.message_id, log_words(exc))
            if not turn.crisis:
                return Reply((t(lang, failure_text(exc)),), failed=True)
            text = t(lang, "crisis_model_down")  # it flagged a crisis before it failed: the help text went out
        topic = await self.store.state.pop(scope, "due_topic")
        if turn.crisis:  # the model flagged the message ([CRISIS: …]): the help text went out; no question, no voice
            log.info("message %s answered as a crisis: the chat model flagged it", turn.message_id)
            turn.reply = self.help.careful(turn, text)
            return await self._after_reply(turn)
        if turn.changes:
            text = f"{text}\n\n{describe(turn.changes, lang)}"
        if topic is not None and topic_raised(text, topic["text"]):
            await self.store.topics.set_status(scope, int(topic["id"]), "raised")
        turn.reply = Reply(split_bubbles(text) or (t(lang, "empty"),))
        return None

    async def _rule_from_objection(self, turn: Turn) -> None:
        """An objection that changed no memory and brought no rule: one call proposes a behaviour rule (maybe none)."""
        if not turn.objection or turn.changes or turn.proposed is not None or turn.held is not None:
            return
        try:
            previous = await self._previous_reply(turn)
            rule = await propose_rule(self.background, turn.intake.own, previous, self.store.failures)
        except LLMError as exc:
            log.warning("rule proposal failed: %s", exc)
            return
        if rule:
            await self.questions.propose(turn, rule)

    async def _after_reply(self, turn: Turn) -> Reply:
        """Log the reply (with its question, for a replay after a crash), then schedule learning."""
        assert turn.reply is not None  # the steps before wrote it
        await self._log_reply(turn, "\n\n".join(turn.reply.bubbles))
        self.learning.after_reply(turn.scope)
        return turn.reply

    # --- what the steps share ---------------------------------------------------------------------

    def _logged(self, step: Step) -> Step:
        """A step whose reply the program writes: the reply is logged like the model's."""
        async def logged(turn: Turn) -> Reply | None:
            reply = await step(turn)
            if reply is not None:
                await self._log_reply(turn, "\n\n".join(reply.bubbles))
            return reply

        return logged

    async def _write(self, turn: Turn, extra: tuple[str, ...] = (), on_progress: OnText | None = None,
                     images: tuple[Image, ...] = ()) -> str:
        """The model's answer to the turn's message, with the tools of this turn; when they brought text from the
        web, a line naming its sites goes under it (written by the program, not the model)."""
        zone, propose = await self.zone_for(turn.scope), partial(self.questions.propose, turn)
        tools = ToolContext(self.store, turn.scope, zone, propose, turn.message_id, self.clock, turn.crisis,
                            hold=partial(self.questions.hold, turn), flag_crisis=partial(self.help.flagged, turn))
        text = await self.answers.write(tools, turn.incoming.text, turn.previous_at, extra, on_progress,
                                        turn.incoming.quoted, images)
        turn.reactions.extend(tools.reactions)
        turn.described = next(iter(tools.described), turn.described)
        return with_sources(text, tools.sources, turn.lang)  # the sites of the outside text it got

    async def _run_held(self, scope: Scope, call: HeldCall) -> str:
        """Run a call the person said yes to, with the tools offered now (its tool may be gone since)."""
        tools = ToolContext(self.store, scope, await self.zone_for(scope), _no_rule, clock=self.clock)
        return await run_held(call, tools, await available(tools, self.answers.toolboxes))

    async def _correct(self, turn: Turn) -> list[Change]:
        """Run the correction judge; a failing judge changes nothing."""
        try:
            previous = await self._previous_reply(turn)
            return await correct(self.store, self.background, turn.scope, turn.intake.own, previous)
        except LLMError as exc:
            log.warning("correction judge failed; nothing changed: %s", exc)
            return []

    async def _previous_reply(self, turn: Turn) -> str:
        """The companion's reply before this message ('' when there is none)."""
        before = await self.store.messages.recent(turn.scope, 4, before_id=turn.message_id)
        return next((m.text for m in reversed(before) if m.role == "assistant"), "")

    async def _log_reply(self, turn: Turn, text: str) -> None:
        """Record the reply, tied to the message it answers, so a restart knows it was answered."""
        incoming = turn.incoming
        await self.store.messages.add(turn.scope, "assistant", text, channel=incoming.channel,
                                      channel_message_id=incoming.channel_message_id, created_at=self.clock(),
                                      kind="reply")
