"""The model's answer: the prompt from memory, tool rounds and [RECALL: …] lookups, the markers it leaves."""
from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from datetime import datetime
from zoneinfo import ZoneInfo

from bot.conversation.config import EngineConfig
from bot.conversation.help_lines import crisis_help
from bot.conversation.markers import Marker, flags_crisis, preview_text, split_markers
from bot.conversation.person import person_of
from bot.conversation.prompt import CRISIS_FLAG, QUOTED_CHARS, PromptContext, build_prompt, own_questions
from bot.conversation.safety import signals_crisis
from bot.conversation.suggestion_tool import SUGGEST
from bot.conversation.tools import (
    Tool,
    ToolBox,
    ToolContext,
    available,
    marker_lines,
    offer,
    recall,
    run_tool,
    taints,
)
from bot.exchange import Quoted
from bot.llm.port import LLM, ChatMessage, CompletionRequest, Image, OnText, SystemBlock, ToolCall
from bot.quoting import quote
from memory import MemoryStore, Message, Scope, is_group_scope
from scheduler.relationship_rules import absence_for

MAX_TOOL_ROUNDS = 4
PREVIEW_LOOK_EVERY = 0.1  # seconds between two looks at a streamed reply's visible text (a preview edit: 0.6 s)
CRISIS_MEMORY_SECONDS = 3 * 86400.0  # a message the companion sends on its own this soon after a crisis is careful
CRISIS_MARK = "crisis_at"  # scope state: when a message last showed signs of crisis (any layer of the detector)

_DIARY_QUESTION = re.compile(
    r"\b(tagebuch\w*|einträge|eintrag|diary|entries)\b.*\?|\bwas\s+hast\s+du\s+zuletzt\s+geschrieben"
    r"|\bwhat\s+did\s+you\s+(last\s+)?write", re.IGNORECASE)

Prompt = tuple[list[SystemBlock], list[ChatMessage]]

log = logging.getLogger(__name__)


def asks_about_diary(text: str) -> bool:
    """True for questions about the companion's diary ('wie viele Einträge hast du?')."""
    return bool(_DIARY_QUESTION.search(text))


def heard_text(ctx: PromptContext, system: Sequence[SystemBlock], messages: Sequence[ChatMessage]) -> str:
    """Everything the model is given for this turn, raw and as sent: the user's words, earlier messages, memory."""
    raw = [ctx.user_text] + [m.text for m in ctx.window] + [m.text for m in ctx.pinned]
    raw += [ctx.quoted.text] if ctx.quoted is not None else []
    return "\n".join(raw + [b.text for b in system] + [m.content for m in messages])


class CrisisFlag:
    """The chat model's [CRISIS: …] in this turn's answer, acted on once, the moment it is seen (as the answer streams
    in, or in the answer whole): the engine's `flag_crisis` sends the help text. A marker the model was given (typed by
    the person, or stored) and merely repeated is no flag (`heard`)."""

    def __init__(self, heard: str, act: Callable[[], Awaitable[None]] | None) -> None:
        self.act, self.raised = act, False
        self._read = ""  # the streamed text read last: what grew onto it is all that can flag anew
        self.hear(heard)

    def hear(self, heard: str) -> None:
        """What the model was given so far, but the prompt's own example of the marker (copied, it still counts)."""
        self.heard = heard.replace(CRISIS_FLAG, "")
        self._read = ""

    async def seen_in(self, text: str) -> bool:
        """Whether the model has flagged the turn (acting on it now when this text is the first to say so).

        A streamed text grows a few characters at a time; a marker is complete only with its ']', so the text is read
        whole again only when what grew onto it brings one (not on every piece: that was quadratic, issue 52).
        """
        grown = text[len(self._read):] if text.startswith(self._read) else text
        self._read = text
        if not self.raised and "]" in grown and flags_crisis(text, self.heard):
            self.raised = True
            log.info("the chat model flagged the message: the help line goes out now")
            if self.act is not None:
                await self.act()
        return self.raised


class Previewer:
    """The on_text for the chat model: hands on only what may be shown (no markers, nothing empty); once the model
    flagged a crisis, nothing more (the answer then arrives whole, after the help text).

    The text so far is looked at (markers stripped, handed on) at most every PREVIEW_LOOK_EVERY seconds: each look
    reads it whole, and a look per streamed piece made a long reply quadratic (30,000 characters: 11-20 s of work
    that held back the reply and everyone after it, issue 52). Each piece is still read for a crisis flag, and the
    text a look skipped is handed on once the model is done (`flush`), so the preview ends where the stream did.
    """

    def __init__(self, progress: OnText, user_text: str, flag: CrisisFlag) -> None:
        self.progress, self.user_text, self.flag = progress, user_text, flag
        self._next_look = 0.0
        self._skipped: str | None = None

    async def __call__(self, text: str) -> None:
        if await self.flag.seen_in(text):
            self._skipped = None
            return
        now = asyncio.get_running_loop().time()
        if now < self._next_look:  # a preview is edited at most every 0.6 s; the final reply shows every word
            self._skipped = text
            return
        self._next_look = now + PREVIEW_LOOK_EVERY
        await self._look(text)

    async def flush(self) -> None:
        """Hand on the last text a look skipped (the model is done writing it)."""
        if self._skipped is not None and not self.flag.raised:
            await self._look(self._skipped)

    async def _look(self, text: str) -> None:
        self._skipped = None
        visible = preview_text(text, self.user_text)
        if visible:
            await self.progress(visible)


class ModelAnswers:
    """Writes the chat model's answers: one to a message (with tools) and one the companion sends on its own."""

    def __init__(self, store: MemoryStore, chat: LLM, config: EngineConfig, clock: Callable[[], float],
                 floor: float | None, zone_for: Callable[[Scope], Awaitable[ZoneInfo]],
                 toolboxes: Sequence[ToolBox] = ()) -> None:
        self.store, self.chat, self.config, self.clock, self.floor = store, chat, config, clock, floor
        self.toolboxes = tuple(toolboxes)  # tools from outside the memory (the web, MCP servers, suggestions)
        self.zone_for = zone_for  # the person's own time zone, or the deployment's
        self.last_prompt: Prompt | None = None  # what the model was given last (for tests and benchmarks)

    async def write(self, tools: ToolContext, user_text: str, previous_at: float | None, extra: tuple[str, ...] = (),
                    on_progress: OnText | None = None, quoted: Quoted | None = None,
                    images: Sequence[Image] = (), private: Sequence[Message] | None = None) -> str:
        """The model's answer to a message: up to MAX_TOOL_ROUNDS rounds of tool calls or lookups, then the text.

        Markers the model merely repeated from what it was given (the quoted older message too) are never carried
        out, nor any it wrote after text from outside (the web, a tool server) came into the turn. `images` go with
        the message (this turn only). With `private` (incognito: that stretch's turns, never stored) the answer is
        read only: no markers carried out, only built-in tools that change nothing, nothing put in the state.
        """
        scope, crisis = tools.scope, tools.crisis
        ctx = await self.context(scope, user_text, tools.current_id, previous_at, crisis, zone=tools.zone,
                                 quoted=quoted, private=private)
        # a tool with a marker runs from it too, without tool calling; incognito: no toolbox (they log their calls)
        own = await available(tools, self.toolboxes if private is None else ())
        usable = own if self.config.use_tools else ()
        ctx = replace(ctx, extra=extra, markers=() if self.config.use_tools else marker_lines(own, crisis),
                      images=tuple(images))
        if private is None:
            await self.store.state.put(scope, "why", [h.item_id for h in ctx.notes], self.clock())
        if ctx.due_topic is not None and private is None:
            await self.store.state.put(scope, "due_topic", {"id": ctx.due_topic.id, "text": ctx.due_topic.text})
        system, messages = build_prompt(ctx)
        self.last_prompt = (system, list(messages))
        heard = heard_text(ctx, system, messages)  # markers in it were typed or stored, never the model's own
        flag = CrisisFlag(heard, tools.flag_crisis)  # the model's [CRISIS: …]: the help text at once
        on_text = Previewer(on_progress, user_text, flag) if on_progress is not None else None
        tainted = private is not None  # text from outside came in (or incognito): only tools that change nothing
        for _ in range(MAX_TOOL_ROUNDS):
            offered = offer(usable, crisis, tainted) if self.config.use_tools else None
            asked = CompletionRequest(messages, system=system, tools=offered, on_text=on_text)
            completion = await self.chat.complete(asked)
            if on_text is not None:
                await on_text.flush()
            text, markers = split_markers(completion.text, heard)
            if await flag.seen_in(completion.text) and not crisis:  # from here on a crisis turn: nothing is changed
                crisis, tools = True, replace(tools, crisis=True)
            if not tainted:  # after text from outside, nothing the model writes is carried out (only stripped)
                await self._keep(tools, markers, own)
            recalls = [m.content for m in markers if m.kind == "recall"]
            if completion.tool_calls:
                results = [await run_tool(call, tools, usable, tainted) for call in completion.tool_calls]
                tainted = tainted or any(taints(call, usable) for call in completion.tool_calls)
                messages = messages + [ChatMessage("assistant", completion.text, tool_calls=completion.tool_calls)]
                messages += [ChatMessage("tool", result, tool_call_id=call.id)
                             for call, result in zip(completion.tool_calls, results, strict=True)]
            elif recalls and not text:
                found = [await recall(query, tools) for query in recalls]
                results = ["\n".join(found)]
                messages = messages + [ChatMessage("assistant", completion.text),
                                       ChatMessage("user", "<lookup>\n" + "\n\n".join(found) + "\n</lookup>")]
            else:
                return text
            heard += "".join("\n" + result for result in results)
            flag.hear(heard)
        completion = await self.chat.complete(CompletionRequest(messages, system=system, tools=None, on_text=on_text))
        if on_text is not None:
            await on_text.flush()
        await flag.seen_in(completion.text)
        return split_markers(completion.text, heard)[0]  # after the last round, once more for a plain answer

    async def proactive(self, scope: Scope, reason: str, detail: str) -> str:
        """Write a message the companion sends on its own, with the normal prompt plus the reason."""
        last = await self.store.messages.last_user_message(scope)
        careful = await self._crisis_lately(scope)
        ctx = await self.context(scope, detail or reason, 1 << 62, last.created_at.timestamp() if last else None,
                                 crisis=careful)
        ctx = replace(ctx, user_text="", proactive=f"{reason}: {detail}")
        system, messages = build_prompt(ctx)
        completion = await self.chat.complete(CompletionRequest(messages, system=system, tools=None))
        return split_markers(completion.text)[0]

    async def diary_facts(self, scope: Scope) -> str:
        """What the database says about the diary, so the answer does not depend on a lookup."""
        count = await self.store.diary.count(scope)
        latest = await self.store.diary.latest(scope, 1)
        fact = f"Diary facts from the database: you have written {count} diary entries."
        if latest:
            fact += f" The latest ({latest[0].day}) says: {quote(latest[0].text, 600)}"
        return fact

    async def context(self, scope: Scope, user_text: str, message_id: int, previous_at: float | None,
                      crisis: bool = False, zone: ZoneInfo | None = None,
                      quoted: Quoted | None = None, private: Sequence[Message] | None = None) -> PromptContext:
        """Everything the prompt for a message is built from, read from the memory (in the person's zone); the
        message it replies to, when it does, helps find the notes. `private` turns (incognito's, kept nowhere) end
        the window; then no topic is due and nothing found counts as used."""
        store, now, zone = self.store, self.clock(), zone or await self.zone_for(scope)
        person = await person_of(store, scope, self.config.language, self.config.crisis_country)  # their language
        about = f"{user_text}\n{quoted.text[:QUOTED_CHARS]}" if quoted is not None else user_text
        window = await store.messages.recent(scope, self.config.recent_messages, before_id=message_id)
        if private is not None:
            window = (window + list(private))[-self.config.recent_messages:]
        due = [] if crisis or private is not None else await store.topics.due(scope, now, limit=1)
        relationship = await store.relationships.get(scope)
        long_gone = previous_at is not None and now - previous_at >= absence_for(relationship.stage).total_seconds()
        return PromptContext(
            companion_name=self.config.companion_name, language=person.lang, user_text=user_text,
            now_local=datetime.fromtimestamp(now, zone), persona=self.config.persona,
            profile=await store.profile.list(scope), rules=await store.rules.list(scope, "active"),
            notes=await store.search(scope, about, ("note",), k=5, now=now, min_cosine=self.floor,
                                     use=private is None, rerank=not crisis),  # a crisis answer waits for nothing
            thoughts=await store.search(scope, about, ("thought",), k=3, now=now, min_cosine=self.floor),
            pinned=[m for m in await store.messages.first(scope, 2) if m.id < message_id],
            summary=(await store.conversations.get(scope)).summary,
            window=window,
            previous_user_at=datetime.fromtimestamp(previous_at, zone) if previous_at else None,
            due_topic=due[0] if due else None,
            crisis_notice=crisis_help(person.country, person.lang) if crisis else "",
            tools=self.config.use_tools,
            companion=await store.companions.get(self.config.companion_id),
            relationship=relationship,
            long_absence=long_gone,
            # what was left open, read only when the person is back from a long absence (the prompt offers it then)
            open_topics=[tp.text for tp in await store.topics.list(scope)][-3:] if long_gone and not crisis else [],
            own_questions=own_questions(window),
            people=await store.people.cards(scope),
            zone=zone,
            quoted=quoted,
            group=is_group_scope(scope.user_id),
        )

    async def _keep(self, tools: ToolContext, markers: Sequence[Marker], own: Sequence[Tool] = ()) -> None:
        """Carry out the markers the model left (before any text from outside came into the turn): a rule is
        proposed (never in a crisis), a thought or topic kept, a suggestion noted by its tool (never in a crisis), a
        reaction and a picture's description handed to the engine."""
        for marker in markers:
            if marker.kind == "rule" and not tools.crisis:
                await tools.propose(marker.content)
            elif marker.kind == "thought":
                await self.store.thoughts.add(tools.scope, marker.content, origin="conversation")
            elif marker.kind == "followup":
                await self.store.topics.add(tools.scope, marker.content, origin="conversation")
            elif marker.kind == "suggestion":
                await run_tool(ToolCall("marker", SUGGEST, {"text": marker.content}), tools, own)
            elif marker.kind == "react":
                tools.reactions.append(marker.content)  # the engine decides whether it goes on the message
            elif marker.kind == "photo":
                tools.described.append(marker.content)  # the engine keeps it with a picture's message

    async def _crisis_lately(self, scope: Scope) -> bool:
        """Whether the person showed signs of crisis in the last days (a check-in then speaks with the safety rules)."""
        since = self.clock() - CRISIS_MEMORY_SECONDS
        marked = await self.store.state.get(scope, CRISIS_MARK)
        if isinstance(marked, (int, float)) and marked >= since:
            return True
        recent = await self.store.messages.recent(scope, 40)
        return any(m.role == "user" and m.created_at.timestamp() >= since and signals_crisis(m.text) for m in recent)
