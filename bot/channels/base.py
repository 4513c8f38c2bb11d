"""What every messenger channel shares: who is let in, the turn of a text message, presses, welcomes and pushes.

A channel (Telegram, Matrix) reads its wire, fills in a `Turn`, and lets `Channel.take_text` run the sequence:
an admin's /pair, a command or the engine's answer (typing meanwhile, the reply streamed into a preview), after a
crash the reply recorded before, then the delivery: the messages that show the reply are told to the engine (a
reaction on them is one on the companion's message), and the companion's emoji goes on the person's message. The
subclass fills in how it shows things on its wire (the hooks at the end of `Channel`); the terminal uses `answer`
and `after_press` on their own.
"""
from __future__ import annotations

import contextlib
import functools
import logging
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import ClassVar, Generic, TypeVar

from bot.channels.access import Access, AccessConfig, ApprovedUser
from bot.channels.sending import typing
from bot.channels.shown import Shown, as_written, split_help
from bot.channels.streaming import LivePreview
from bot.commands.catalog import owner_of
from bot.commands.invocation import Pressed
from bot.commands.runner import Commands
from bot.conversation.documents import kind_of
from bot.conversation.engine import Engine
from bot.conversation.turn import SayNow
from bot.exchange import Attachment, Incoming, Quoted, Reply
from bot.llm.port import OnText
from bot.texts import t
from memory import GROUP_TITLE, is_group_scope

log = logging.getLogger(__name__)

W = TypeVar("W")  # where a channel shows messages: a Telegram chat id, a Matrix room id
H = TypeVar("H")  # how a channel names a message it showed: a message id, an event id


@dataclass(frozen=True)
class Turn(Generic[W, H]):
    """A text (maybe a picture's caption) to answer, as a channel read it off its wire."""

    where: W  # the chat or room to answer in
    scope: str  # whose memory: the person's, or the group's
    sender: str  # who wrote it
    text: str  # as the engine sees it (in a group: 'Anna: …')
    ref: str  # the channel's id of the message (a command runs once by it)
    event: str  # the inbox's id of what brought it (its record of what the reply showed)
    group: bool = False
    command: bool = False
    replayed: bool = False  # an earlier run recorded it and did not finish it
    reply_to: H | None = None  # the message the answer replies to (in a group: the one it answers)
    origin: H | None = None  # the message itself, where the companion's reaction goes
    quoted: Quoted | None = None  # the older message it replies to
    addressed: bool = True  # in a group: it named the companion or replied to it
    attachment: Attachment | None = None  # a picture or a voice note it brings; `text` is then its caption
    sent_at: float | None = None  # when the person sent it, by the messenger's clock (None: not told)
    thread: H | None = None  # the thread it was written in (Matrix: its root), where the answer goes
    title: str = ""  # in a group: its name as the messenger gives it (kept for the web page), else ''
    forwarded: bool = False  # someone else's words the person forwarded (never a command, never an answer)
    language: str = ""  # the sender's language as the messenger names it ('en-US'); empty: it names none


async def answer(engine: Engine, commands: Commands | None, incoming: Incoming, *, command: bool,
                 ref: str | None = None, on_progress: OnText | None = None,
                 say_now: SayNow | None = None) -> tuple[Reply | None, bool]:
    """A text's answer: the command's when it is one (run once by `ref`), else the engine's; whether a command ran.

    Counted for the metrics: the message, its reply and how long the reply took to be ready, a failure by kind.
    """
    metrics, started = engine.metrics, time.monotonic()
    metrics.message_in(incoming.channel)
    await engine.meet(incoming)  # a new person's language, as their messenger names it
    try:
        reply, ran_command = await _answer(engine, commands, incoming, command, ref, on_progress, say_now)
    except Exception:
        metrics.error("command" if command else "turn")
        raise
    if reply is not None:
        metrics.message_out(incoming.channel)
        metrics.reply_seconds(incoming.channel, time.monotonic() - started)
    return reply, ran_command


async def _answer(engine: Engine, commands: Commands | None, incoming: Incoming, command: bool, ref: str | None,
                  on_progress: OnText | None, say_now: SayNow | None = None) -> tuple[Reply | None, bool]:
    """The command's answer or the engine's; whether a command ran."""
    if command and commands is not None:
        reply = await commands.run(incoming.user_id, incoming.text, channel=incoming.channel, ref=ref,
                                   sent_at=incoming.sent_at)
        if reply is not None:
            return reply, True
    return await engine.handle(incoming, on_progress=on_progress, say_now=say_now), False


def after_press(pressed: Pressed) -> Reply | str | None:
    """What a press shows where its message is not edited: a new page (with its own choices), else its notice."""
    if pressed.text and (pressed.buttons or not pressed.notice):
        return Reply((pressed.text,), buttons=pressed.buttons)
    return pressed.notice or pressed.text or None


class Channel(ABC, Generic[W, H]):
    """A messenger channel's shared part; a subclass fills in its wire format through the hooks below."""

    name: ClassVar[str]
    private_chats: ClassVar[str]  # what the messenger calls a chat with one person, for push refusals
    wire_errors: ClassVar[tuple[type[Exception], ...]]  # what a failed send raises (logged where a send is extra)

    def __init__(self, engine: Engine, commands: Commands, access: AccessConfig,
                 clock: Callable[[], float] = time.time) -> None:
        self.engine = engine
        self.commands = commands
        self.clock = clock
        self.lang = engine.config.language
        self.access = Access(engine.store.access, access, self.lang, clock)
        self.inbox = engine.store.inbox
        self._titles: dict[str, str] = {}  # the group names kept so far (a name is written when it changes)

    @property
    def allowlist(self) -> str:
        """The setting that lets users in, named in warnings."""
        return f"MNEMO_{self.name.upper()}_ALLOWED_USERS"

    def _warn_if_closed(self) -> None:
        """Warn at start when nobody can be let in."""
        if not self.access.config.allowed and self.access.config.unknown_users != "pair":
            log.warning("%s is empty and pairing is off: mnemo will answer nobody", self.allowlist)

    # --- the turn of a text -----------------------------------------------------------------------

    async def take_text(self, turn: Turn[W, H]) -> None:
        """Answer a text: an admin's /pair, else a command or the engine (streamed when on), then deliver the reply.

        A replayed message shows what it showed before the crash again (edited, not resent); its reply is the one
        recorded then when the engine has answered it before. A command's answer is marked delivered after it.
        """
        if not turn.group and await self._admin(turn):
            return
        if turn.group and turn.title and self._titles.get(turn.scope) != turn.title:
            await self.engine.store.state.put(await self.engine.scope_for(turn.scope), GROUP_TITLE, turn.title)
            self._titles[turn.scope] = turn.title
        if turn.group and turn.command and not self.access.is_admin(turn.sender):
            log.info("command from %s, who is no admin, ignored in %s", turn.sender, turn.where)
            return
        quoted = await self._quote(turn)
        incoming = Incoming(turn.scope, turn.text, channel=self.name, channel_message_id=turn.ref, sender=turn.sender,
                            may_decide=not turn.group or self.access.is_admin(turn.sender), quoted=quoted,
                            addressed=turn.addressed, attachment=turn.attachment, sent_at=turn.sent_at,
                            forwarded=turn.forwarded, language=turn.language)
        shown = await self._shown(turn)
        preview = self._preview(turn, shown)
        try:
            async with typing(functools.partial(self._indicate, turn.where), preview):
                reply, ran_command = await answer(self.engine, self.commands, incoming, command=turn.command,
                                                  ref=turn.ref, on_progress=self._progress(preview),
                                                  say_now=functools.partial(self._say_now, turn, shown))
        finally:
            if preview is not None:
                await preview.close()
        if reply is None and turn.replayed:
            reply = await self.engine.earlier_reply(incoming)  # recorded before a crash, maybe not (all) sent
        if reply is None:
            log.info("message %s was answered before; skipped", turn.ref)
            return
        async with self._once(turn.scope, turn.ref) if ran_command else contextlib.nullcontext():
            ids = await self._show_reply(turn, reply, shown, owner_of(reply.buttons, turn.sender, incoming.may_decide))
        if not ran_command:  # a reaction on these messages is one on the companion's reply
            refs = [self._message_ref(turn.where, i) for i in ids]
            await self.engine.delivered(turn.scope, self.name, refs, answering=turn.ref)
        if reply.reaction and turn.origin is not None:
            await self._reacting(turn.where, turn.origin, reply.reaction)

    async def _say_now(self, turn: Turn[W, H], shown: Shown[H], text: str) -> None:
        """Send a text at once, before the reply, as a message of its own (the help text in a crisis), recorded in the
        reply's ledger; one shown before a crash is not sent again. A failure raises, and the engine puts the text
        first in the reply instead."""
        if shown.help is not None:
            log.info("the help text for %s was shown before the restart (%s); not sent again", turn.ref, shown.help)
            return
        await shown.put_help(await self._send_now(turn, text), text)

    async def edit_in_crisis(self, text: str, ref: str) -> bool:
        """Whether an edited message (or caption) shows signs of crisis: then it is answered as a message of its own,
        with the help line; any other edit is ignored, since the original was already answered."""
        crisis = await self.engine.config.crisis_detector.crisis(text)
        log.info("edit %s %s", ref, "shows signs of crisis: answered" if crisis else "ignored (answered before)")
        return crisis

    async def _reacting(self, where: W, message: H, emoji: str) -> None:
        """Put the companion's emoji on a person's message; a messenger that refuses it is only logged."""
        try:
            await self._react(where, message, emoji)
        except self.wire_errors as exc:
            log.warning("could not react with %s to message %s in %s: %s", emoji, message, where, exc)

    async def _quote(self, turn: Turn[W, H]) -> Quoted | None:
        """The older message the turn replies to; one without words on the wire (a voice note) by the words logged
        for it, its transcript (None when none were: never heard, or said in incognito)."""
        quoted = turn.quoted
        if quoted is None or quoted.text.strip() or quoted.ref is None:
            return quoted
        scope = await self.engine.scope_for(turn.scope)
        logged = await self.engine.store.messages.by_channel_id(scope, self.name, quoted.ref)
        return Quoted(logged.text, quoted.by_companion) if logged is not None and logged.text.strip() else None

    async def _shown(self, turn: Turn[W, H]) -> Shown[H]:
        """What the reply to this message showed before the last run stopped (only a replayed one can have)."""
        if not turn.replayed:
            return Shown(self.inbox, self.name, turn.event, text_of=self._text_of)
        help_id, ids, looks = split_help(await self.inbox.shown(self.name, turn.event),
                                         await self.inbox.shown_texts(self.name, turn.event))
        return Shown(self.inbox, self.name, turn.event, [self._message_id(i) for i in ids], looks, self._text_of,
                     self._message_id(help_id) if help_id is not None else None)

    @contextlib.asynccontextmanager
    async def _once(self, scope: str, ref: str) -> AsyncIterator[None]:
        """Mark the answer of a command or press delivered after the block, or after it failed, so its kept copy goes.

        Not when the block is cancelled (shutdown): the message is not handled then and its replay delivers it.
        """
        try:
            yield
        except Exception:  # the failure is told and the message counts as handled
            await self.commands.delivered(scope, self.name, ref)
            raise
        await self.commands.delivered(scope, self.name, ref)

    @contextlib.asynccontextmanager
    async def _pressing(self, scope: str, data: str, admin: bool, press_id: str) -> AsyncIterator[Pressed]:
        """Let the commands act on a press (once, by its id); its answer counts as delivered after the block."""
        ref = f"press:{press_id}"
        pressed = await self.commands.press(scope, data, admin=admin, channel=self.name, ref=ref)
        async with self._once(scope, ref):
            yield pressed

    def hears(self, size: int | None, seconds: float | None = None) -> bool:
        """Whether a voice note of this size and length (None: not told) is worth downloading: the engine can hear it
        and it is neither too large nor too long (else the engine answers from what the messenger told alone)."""
        config = self.engine.config
        return (self.engine.voice.transcriber is not None and (size is None or size <= config.voice_max_bytes)
                and (seconds is None or seconds <= config.voice_max_seconds))

    def fetches(self, found: Attachment) -> bool:
        """Whether a voice note or a document the messenger described is worth downloading (`hears`; a document of a
        kind mnemo reads, within its size): else the engine answers from the description alone."""
        if found.kind == "voice":
            return self.hears(found.size or None, found.seconds)
        return found.size <= self.engine.config.document_max_bytes and kind_of(found.mime, found.name) is not None

    # --- pairing ----------------------------------------------------------------------------------

    async def _admin(self, turn: Turn[W, H]) -> bool:
        """Run an admin's /pair command; True when it was one."""
        said = await self.access.admin_command(turn.sender, turn.text)
        if said is None:
            return False
        await self._tell(turn.where, said.text, turn.ref, "admin")
        if said.approved is not None:
            await self._welcome(said.approved)
        return True

    async def _welcome(self, user: ApprovedUser) -> None:
        """Tell an approved user (from a chat or the command line) that they can write now."""
        if user.channel != self.name:
            return
        try:
            await self._greet(user.user_id, t(self.lang, "paired_welcome"))
        except self.wire_errors as exc:
            log.warning("could not welcome %s: %s", user.user_id, exc)

    async def _tell_failure(self, where: W, answering: str | None = None) -> None:
        """Tell a chat one short sentence after a failure (a failing send is only logged)."""
        try:
            await self._tell(where, t(self.lang, "failed"), answering, "failed")
        except self.wire_errors as exc:
            log.warning("could not tell %s about the failure: %s", where, exc)

    async def _may_push(self, user_id: str) -> bool:
        """Whether mnemo may speak first to this user: never in a group (ValueError), only to users let in."""
        if is_group_scope(user_id):
            raise ValueError(f"not pushing to {user_id}: mnemo speaks first only in {self.private_chats}")
        scope = self._user_scope(user_id)
        if await self.access.allows(scope):
            return True
        log.warning("not pushing to %s: neither on %s nor paired", scope, self.allowlist)
        return False

    # --- the wire: what a channel fills in --------------------------------------------------------------

    @abstractmethod
    def _message_id(self, recorded: str) -> H:
        """A message id as the inbox recorded it, read back."""
        ...

    def _message_ref(self, where: W, message: H) -> str:
        """How a message the channel showed is named to the engine (a reaction on it names it so)."""
        return str(message)

    def _text_of(self, looks: str) -> str:
        """The words in what the ledger records a message displays."""
        return as_written(looks)

    def _user_scope(self, user_id: str) -> str:
        """A user id given to `send`, written as a scope."""
        return user_id

    def _preview(self, turn: Turn[W, H], shown: Shown[H]) -> LivePreview[H] | None:
        """The message that shows the reply while the model writes; None: the reply is not streamed."""
        return None

    def _progress(self, preview: LivePreview[H] | None) -> OnText | None:
        """What hands the model's text so far to the preview."""
        return preview.update if preview is not None else None

    @abstractmethod
    async def _indicate(self, where: W, on: bool) -> None:
        """Show (or stop showing) that mnemo is typing."""
        ...

    @abstractmethod
    async def _tell(self, where: W, text: str, answering: str | None = None, why: str = "") -> None:
        """Send one short text of mnemo's own, in answer to the message `answering` for the reason `why`."""
        ...

    @abstractmethod
    async def _send_now(self, turn: Turn[W, H], text: str) -> H:
        """Send a text at once as a message of its own in the turn's chat (in answer to the message, where the channel's
        replies are); the message that shows it."""
        ...

    @abstractmethod
    async def _greet(self, user_id: str, text: str) -> None:
        """Send a text to a person in their own chat."""
        ...

    @abstractmethod
    async def _show_reply(self, turn: Turn[W, H], reply: Reply, shown: Shown[H], owner: str | None) -> list[H]:
        """Deliver the reply to a text: edit what `shown` holds into place, send the rest, offer its choices; the
        messages that show its text."""
        ...

    async def _react(self, where: W, message: H, emoji: str) -> None:
        """Put the companion's emoji on a message (a messenger without reactions leaves it)."""
