"""Tools the chat model may call, declared and run here: search_memory, recall_chat, propose_rule, read_diary, and
the tools of the toolboxes the app plugs in (the web, MCP servers, suggestions).

A tool whose result is text from outside (`Tool.untrusted`) taints the turn: from then on only tools that change
nothing (`Tool.in_crisis`) are offered or run, so a page that says "remember this rule" is just text.
A tool that changes something outside (`Tool.confirm`, a tool server's) never runs in the turn that calls it: the
call is held (`ToolContext.hold`), the person is asked under the reply, and it runs after their yes (`run_held`).
A model without tool calling writes [RECALL: …] instead; `recall` answers that marker like a tool.
"""
from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from datetime import time as dtime
from typing import Any, Literal, Protocol, runtime_checkable
from zoneinfo import ZoneInfo

from bot.conversation.prompt import origin_note
from bot.llm.port import ToolCall, ToolSpec
from bot.quoting import clip, quote
from memory import MemoryStore, Scope, SearchHit, Source, card_line, time_window

log = logging.getLogger(__name__)

NOTHING = "Nothing found."
SPEAKERS = {"user": "the person", "assistant": "you"}
RECALL_SOURCES: tuple[Source, ...] = ("note", "profile", "thought", "person", "message")

ProposeRule = Callable[[str], Awaitable[str]]  # the port the engine fills: propose a rule in the turn being answered


@dataclass(frozen=True)
class HeldCall:
    """A call of a tool that changes something, waiting for the person's yes."""

    tool: str  # the tool's name as the model called it
    arguments: dict[str, Any]
    title: str  # the tool as the person reads it ('Set an alarm clock (weather)')
    labels: dict[str, str] = field(default_factory=dict)  # the arguments' own titles, as the tool's schema gives them

    def as_dict(self) -> dict[str, Any]:
        """The call as JSON-ready data, kept with the open question."""
        return {"tool": self.tool, "arguments": self.arguments, "title": self.title, "labels": self.labels}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> HeldCall:
        """The call kept by `as_dict`."""
        return cls(str(raw["tool"]), dict(raw["arguments"]), str(raw["title"]), dict(raw.get("labels") or {}))


HoldCall = Callable[[HeldCall], Awaitable[str]]  # the port the engine fills: hold a call, asked under the reply


@dataclass(frozen=True)
class ToolContext:
    """Where the tools of one turn run: the person's memory, their zone, the message being answered."""

    store: MemoryStore
    scope: Scope
    zone: ZoneInfo
    propose: ProposeRule
    current_id: int = 0  # the message being answered: it and later ones are left out of transcripts
    clock: Callable[[], float] = time.time
    crisis: bool = False  # a crisis turn changes no rule
    sources: list[str] = field(default_factory=list)  # where the outside text the model got came from (URLs)
    reactions: list[str] = field(default_factory=list)  # what the model's [REACT: …] markers named (checked later)
    tainted: bool = False  # the model had read text from outside when it asked for this call
    hold: HoldCall | None = None  # where a call of a tool that asks first waits for the person's yes (None: refused)
    described: list[str] = field(default_factory=list)  # what the model said a picture shows ([PHOTO: …])
    flag_crisis: Callable[[], Awaitable[None]] | None = None  # the engine's: the model wrote [CRISIS: …] (help now)


def day_window(from_date: str | None, to_date: str | None, zone: ZoneInfo) -> tuple[float, float] | None:
    """Turn optional YYYY-MM-DD bounds into a [start, end) unix window in the zone; None when both are absent."""
    if not from_date and not to_date:
        return None
    start_day = datetime.strptime(from_date or "1970-01-02", "%Y-%m-%d").date()
    end_day = datetime.strptime(to_date or "9999-12-30", "%Y-%m-%d").date() + timedelta(days=1)
    start = datetime.combine(start_day, dtime(), zone).timestamp()
    end = datetime.combine(end_day, dtime(), zone).timestamp()
    return start, end


def recall_window(query: str, when: str | None, now: float, zone: ZoneInfo) -> tuple[str, tuple[float, float] | None]:
    """The search text and the hard time filter that time words in `when` or in the query name."""
    moment = datetime.fromtimestamp(now, zone)
    if when:
        window = time_window(when, moment, zone)
        if window:
            return query, window.as_unix()
    window = time_window(query, moment, zone)
    if window:
        return window.rest or query, window.as_unix()
    return query, None


async def search_memory(store: MemoryStore, scope: Scope, query: str, zone: ZoneInfo) -> str:
    """Notes, profile entries, thoughts and people that fit; a person found directly or through a note comes
    with their record (names, relation, relations, facts)."""
    hits = await store.search(scope, query, ("note", "profile", "thought", "person"), k=6, include_faded=True,
                              use=True, rerank=True)
    linked = await store.people.persons_of_notes(scope, [h.item_id for h in hits if h.source == "note"])
    ids = [h.item_id if h.source == "person" else linked.get(h.item_id) for h in hits]
    cards = await store.people.cards(scope, list(dict.fromkeys(i for i in ids if i is not None)), limit=3)
    found = await transcript_lines(store, scope, [h for h in hits if h.source != "person"], zone)
    if not cards:
        return found
    people = "People:\n" + "\n".join(f"- {card_line(card, facts=5)}" for card in cards)
    return people if found == NOTHING else f"{found}\n{people}"


async def _search_memory(args: dict[str, Any], at: ToolContext) -> str:
    return await search_memory(at.store, at.scope, str(args.get("query", "")), at.zone)


async def _recall_chat(args: dict[str, Any], at: ToolContext) -> str:
    query, window = recall_window(str(args.get("query", "")), args.get("when"), at.clock(), at.zone)
    window = day_window(args.get("from_date"), args.get("to_date"), at.zone) or window
    hits = await at.store.search(at.scope, query, ("message",), k=9, window=window)
    hits = [h for h in hits if not at.current_id or h.item_id < at.current_id][:8]
    return await transcript_lines(at.store, at.scope, sorted(hits, key=lambda h: h.created_at), at.zone)


async def _propose_rule(args: dict[str, Any], at: ToolContext) -> str:
    return await at.propose(str(args.get("rule", "")))


async def _read_diary(args: dict[str, Any], at: ToolContext) -> str:
    count = max(1, min(5, int(args.get("count", 1) or 1)))
    entries = await at.store.diary.latest(at.scope, count)
    return _format([(e.created_at, e.text) for e in entries], at.zone) if entries else "The diary is empty."


FailureKind = Literal["timeout", "unreachable", "error", "failed"]


class ToolFailed(Exception):
    """A tool could not do its work (a server down, a limit reached); the message goes to the model as the result.

    `why` is what the person is told when a call they said yes to fails (the message is English, for the model and
    the log at DEBUG, as it may quote the model): the server did not answer in time, could not be reached, reported
    an error, or it failed otherwise.
    """

    def __init__(self, message: str, why: FailureKind = "failed") -> None:
        super().__init__(message)
        self.why = why


class ToolGone(ToolFailed):
    """A held call's tool is no longer offered (its server left the configuration, or no longer lists it)."""


@dataclass(frozen=True)
class Tool:
    """One tool: what the model is told of it, and what runs when the model calls it."""

    spec: ToolSpec
    run: Callable[[dict[str, Any], ToolContext], Awaitable[str]]
    in_crisis: bool = True  # False: it changes something, so it is not offered (nor run) in a crisis or tainted turn
    untrusted: bool = False  # True: its result is text from outside (the web, a tool server); it taints the turn
    marker: str = ""  # how a model without tool calling asks for it: one line of the prompt (its marker runs it)
    confirm: bool = False  # True: it changes something outside, so a call is held until the person says yes
    title: str = ""  # how the person is shown the tool when asked (default: its name)


class ToolBox(Protocol):
    """Tools from outside the memory (the web, MCP servers, suggestions), offered beside the built-in ones."""

    async def tools(self, at: ToolContext) -> Sequence[Tool]:
        """The tools this box offers in this turn (none when it is switched off or its limit is reached)."""
        ...


@runtime_checkable
class ForgetsScope(Protocol):
    """A toolbox that keeps something of a person outside the database (MCP servers), asked on /deleteme."""

    async def forget(self, scope: Scope) -> Sequence[str]:
        """Erase what the box keeps of the scope; the names of the places it cannot clean (shared MCP servers)."""
        ...


_TOOLS = (
    Tool(ToolSpec(
        "search_memory",
        "Search what you remember about the person (notes, profile, your thoughts) and the people in their life"
        " ('who is Jana?', 'what do you know about my sister?', 'who works at the hospital?') by meaning and words.",
        {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    ), _search_memory),
    Tool(ToolSpec(
        "recall_chat",
        "Search the raw chat transcript. Time words in `when` or in the query ('gestern abend', 'letzte Woche',"
        " 'yesterday evening') or two dates (YYYY-MM-DD) limit it to that time, in the person's time zone.",
        {
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "when": {"type": "string", "description": "time words, e.g. 'gestern abend'"},
                "from_date": {"type": "string", "description": "first day, YYYY-MM-DD"},
                "to_date": {"type": "string", "description": "last day, YYYY-MM-DD"},
            },
            "required": ["query"],
        },
    ), _recall_chat),
    Tool(ToolSpec(
        "propose_rule",
        "Propose one behaviour rule (one sentence) after the person objected to how you behave; they confirm it.",
        {"type": "object", "properties": {"rule": {"type": "string"}}, "required": ["rule"]},
    ), _propose_rule, in_crisis=False),  # a crisis turn changes no rule
    Tool(ToolSpec(
        "read_diary",
        "Read your own latest diary entries.",
        {"type": "object", "properties": {"count": {"type": "integer", "minimum": 1, "maximum": 5}}},
    ), _read_diary),
)
BUILT_IN: tuple[Tool, ...] = _TOOLS


async def available(at: ToolContext, boxes: Sequence[ToolBox]) -> tuple[Tool, ...]:
    """The built-in tools and those of the boxes for this turn (a name taken already is not offered twice)."""
    found = {tool.spec.name: tool for tool in BUILT_IN}
    for box in boxes:
        for tool in await box.tools(at):
            found.setdefault(tool.spec.name, tool)
    return tuple(found.values())


def marker_lines(tools: Sequence[Tool], crisis: bool) -> tuple[str, ...]:
    """What a model without tool calling is told of the markers it may write for these tools (in a crisis only
    those of tools that change nothing)."""
    return tuple(tool.marker for tool in tools if tool.marker and (tool.in_crisis or not crisis))


def offer(tools: Sequence[Tool], crisis: bool, tainted: bool) -> tuple[ToolSpec, ...]:
    """What the model is told it may call: in a crisis or after text from outside, only what changes nothing."""
    return tuple(tool.spec for tool in tools if tool.in_crisis or not (crisis or tainted))


async def run_tool(call: ToolCall, at: ToolContext, tools: Sequence[Tool] = BUILT_IN, tainted: bool = False) -> str:
    """Run one tool call and return its result as text for the model; bad arguments or a failing tool get a short
    error text, and a tool that was not offered (unknown, or changing something in a crisis or tainted turn) none."""
    args: dict[str, Any] = call.arguments if isinstance(call.arguments, dict) else {}
    tool = next((tool for tool in tools if tool.spec.name == call.name), None)
    if tool is None or ((at.crisis or tainted) and not tool.in_crisis):
        return f"error: unknown tool {call.name!r}"
    try:
        if tool.confirm:
            return await _hold(tool, args, at)
        return await tool.run(args, replace(at, tainted=True) if tainted else at)
    except (ValueError, TypeError) as exc:
        # The arguments and the errors about them hold the model's words (a search query): DEBUG only.
        log.warning("tool %s got bad arguments (%s)", call.name, type(exc).__name__)
        log.debug("tool %s: arguments %r: %s", call.name, args, exc)
        return f"error: bad arguments ({exc})"
    except ToolFailed as exc:
        log.info("tool %s failed (%s)", call.name, exc.why)
        log.debug("tool %s failed: %s", call.name, exc)
        return f"error: {exc}"
    except Exception as exc:  # a toolbox's bug or an SDK error it did not map: the turn goes on (cancelling does not)
        log.exception("tool %s raised unexpectedly", call.name)
        return f"error: {unexpected(exc)}"


async def _hold(tool: Tool, args: dict[str, Any], at: ToolContext) -> str:
    """Hold a call of a tool that asks first, once its arguments fit the tool's schema; what the model is told."""
    if at.hold is None:
        raise ToolFailed("this tool changes something and cannot wait for the person's yes here")
    import jsonschema  # here, not at the top: it costs a sixth of a second at every start, and few hold a call

    try:
        jsonschema.validate(args, tool.spec.parameters)
    except jsonschema.ValidationError as exc:
        raise ValueError(exc.message) from exc
    except jsonschema.SchemaError as exc:  # the server's schema is broken: the server checks the arguments itself
        log.info("tool %s has a schema that cannot check arguments: %s", tool.spec.name, exc.message)
    return await at.hold(HeldCall(tool.spec.name, args, tool.title or spelled(tool.spec.name),
                                  argument_labels(tool.spec.parameters)))


async def run_held(call: HeldCall, at: ToolContext, tools: Sequence[Tool]) -> str:
    """Run a held call after the person's yes; ToolGone when its tool is no longer offered, ToolFailed when it fails."""
    tool = next((tool for tool in tools if tool.spec.name == call.tool and tool.confirm), None)
    if tool is None:
        raise ToolGone(f"{call.title} is no longer available")
    try:
        return await tool.run(dict(call.arguments), at)
    except (ValueError, TypeError) as exc:
        raise ToolFailed(f"bad arguments ({exc})") from exc
    except ToolFailed:
        raise
    except Exception as exc:  # as in run_tool: logged with its traceback, and the person is told it failed
        log.exception("held call of %s raised unexpectedly", call.tool)
        raise ToolFailed(unexpected(exc)) from exc


def unexpected(exc: Exception) -> str:
    """What the model is told of an error a tool did not expect (its kind; the traceback goes to the log)."""
    return f"the tool failed unexpectedly ({type(exc).__name__})"


def spelled(name: str) -> str:
    """A name as words ('set_alarm' -> 'set alarm', 'addItem' -> 'add item')."""
    words = "".join(f" {c.lower()}" if c.isupper() else c for c in name).replace("_", " ").replace("-", " ")
    return " ".join(words.split())


def argument_labels(schema: dict[str, Any]) -> dict[str, str]:
    """The arguments' own titles in a tool's schema ('Uhrzeit' for 'time'); a title that only spells the name out
    (pydantic's 'Time' for 'time') is none."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    labels: dict[str, str] = {}
    for name, about in (properties or {}).items():
        title = about.get("title") if isinstance(about, dict) else None
        if isinstance(title, str) and title.strip() and spelled(title) != spelled(name):
            labels[name] = " ".join(title.split())
    return labels


def call_summary(arguments: dict[str, Any], labels: dict[str, str] | None = None, lang: str = "de",
                 limit: int = 800) -> str:
    """A held call's arguments as the person reads them; '' for none. An argument is named by its own title; without
    one by its name spelled out in English ('due date: 07:00'), and not at all in German, where a raw English key
    would be the only foreign word ('07:00, Aufstehen'). Long ones are cut with '…': the person sees that there is
    more than is shown before saying yes."""
    parts = []
    for name, value in arguments.items():
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        label = (labels or {}).get(name) or (spelled(name) if lang == "en" else "")
        parts.append(f"{label}: {shown}" if label else shown)
    return clip(" ".join(", ".join(parts).split()), limit)


def taints(call: ToolCall, tools: Sequence[Tool]) -> bool:
    """Whether the call's result is text from outside."""
    return any(tool.untrusted for tool in tools if tool.spec.name == call.name)


async def recall(query: str, at: ToolContext) -> str:
    """Answer a [RECALL: …] marker: memory and messages, or only messages when the query names a time."""
    text, window = recall_window(query, None, at.clock(), at.zone)
    sources: tuple[Source, ...] = ("message",) if window else RECALL_SOURCES
    hits = await at.store.search(at.scope, text, sources, k=7, window=window, now=at.clock(),
                                 include_faded=True, use=True)
    hits = [h for h in hits if h.source != "message" or h.item_id < at.current_id][:6]
    return f"[{query}]\n" + await transcript_lines(at.store, at.scope, hits, at.zone, 600)


def _format(items: list[tuple[datetime, str]], zone: ZoneInfo, limit: int = 400) -> str:
    """Dated lines of quoted text; every date and time in the person's zone."""
    if not items:
        return NOTHING
    return "\n".join(f"{when.astimezone(zone):%Y-%m-%d %H:%M}: {quote(text, limit)}" for when, text in items)


async def transcript_lines(store: MemoryStore, scope: Scope, hits: Sequence[SearchHit], zone: ZoneInfo,
                           limit: int = 400) -> str:
    """Search hits as dated lines in the person's zone; a message line says who wrote it."""
    if not hits:
        return NOTHING
    lines = []
    for hit in hits:
        when = f"{hit.created_at.astimezone(zone):%Y-%m-%d %H:%M}"
        message = await store.messages.get(scope, hit.item_id) if hit.source == "message" else None
        who = f" {SPEAKERS.get(message.role, message.role)}{origin_note(message.origin)}" if message is not None else ""
        lines.append(f"{when}{who}: {quote(hit.text, limit)}")
    return "\n".join(lines)
