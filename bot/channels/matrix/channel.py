"""The Matrix channel: matrix-nio in front of the engine and the commands.

Direct rooms are for allowed users; an unknown user who invites the bot to a direct room or writes there gets a
pairing code. In allowed rooms mnemo answers only when mentioned or replied to, with the room's own memory. Events
come in through the sync loop (syncing.py), which records them in the inbox before it answers them. Each message sent
in answer to an event carries a transaction id derived from that event, so a send repeated after a crash shows nothing
twice. The turn of a text is the shared one (bot/channels/base.py); this module reads Matrix events and fills in how
Matrix shows a reply. The login checks that the crypto store still holds the device's keys (crypto_store.py).

An encrypted event whose key has not arrived stays in the inbox and is answered once it can be read (keys.py); a
person whose message is given up is told so in their direct room. Buttons become reactions (choices.py): kept in the
database, owned by the person who asked, redacted once decided. Any other reaction on one of the companion's messages
is kept as feedback (its redaction takes it back), and the companion may put an emoji of its own on a person's
message. A reply to an older message brings that message along (fetched from the homeserver, the fallback quote lines
taken off the reply's own text).
"""
from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

import aiohttp
from nio import (
    AsyncClient,
    Event,
    MatrixRoom,
    MegolmEvent,
    ReactionEvent,
    RedactionEvent,
    RoomEncryptedImage,
    RoomEncryptedMedia,
    RoomMessageEmote,
    RoomMessageImage,
    RoomMessageMedia,
    RoomMessageText,
)

from bot.channels.base import Turn, after_press
from bot.channels.matrix.choices import Reactions
from bot.channels.matrix.config import E2E_AVAILABLE, MatrixConfig, access_config, client_config
from bot.channels.matrix.device_keys import CryptoHealth
from bot.channels.matrix.images import ImageEvent, caption_of, picture_of
from bot.channels.matrix.keys import WaitingForKeys
from bot.channels.matrix.messages import (
    InThread,
    edited_text,
    emoji_key,
    fit_messages,
    is_edit,
    media_caption,
    media_of,
    reaction_choices,
    reaction_content,
    replied_to,
    split_message,
    strip_reply_fallback,
    thread_root,
    transaction_id,
    with_bang_commands,
)
from bot.channels.matrix.outgoing import Outgoing
from bot.channels.matrix.reading import MatrixReading, in_thread
from bot.channels.matrix.rooms import Received, Rooms, Route
from bot.channels.matrix.session import Session, log_in
from bot.channels.matrix.syncing import Syncing, sync_lease
from bot.channels.shown import Shown, show_once
from bot.channels.streaming import LivePreview
from bot.commands.catalog import COMMANDS, owner_of
from bot.commands.invocation import Pressed
from bot.commands.runner import Commands
from bot.conversation.engine import Engine
from bot.errors import ConfigError, MatrixError
from bot.exchange import Button, Reply, question_of
from bot.llm.port import OnText
from bot.logs import FIRST_LINE
from bot.texts import t

log = logging.getLogger(__name__)

P = TypeVar("P")


def bang(text: str) -> str:
    """A bot text as Matrix shows it: its commands written with '!' (clients keep '/…' for themselves)."""
    return with_bang_commands(text, (*COMMANDS, "pair"))  # /pair is the admins' command beside the others


def started(part: P | None) -> P:
    """A part of the channel that is there once it started."""
    assert part is not None, "the Matrix channel is not started"
    return part


class MatrixChannel(MatrixReading):
    """Answers allowed Matrix users in direct rooms and mentions in allowed rooms; pushes messages on request."""

    name = "matrix"
    private_chats = "direct rooms"
    wire_errors = (MatrixError,)

    def __init__(self, engine: Engine, commands: Commands, config: MatrixConfig,
                 clock: Callable[[], float] = time.time) -> None:
        super().__init__(engine, commands, access_config(config), clock)
        self.config = config
        self._threads: dict[str, InThread] = {}  # the events being handled that were written in a thread
        self.data_dir = config.data_dir
        self.session = Session(config.data_dir, config.homeserver, config.user_id)
        self.client: AsyncClient | None = None
        self._out: Outgoing | None = None
        self._room_guide: Rooms | None = None
        self._keys: WaitingForKeys | None = None
        self._reactions: Reactions | None = None
        self._syncing: Syncing | None = None
        self.crypto = CryptoHealth()  # what /healthz and the log say of the keys

    @property
    def me(self) -> str:
        """The bot's own Matrix id."""
        return self.config.user_id

    @property
    def out(self) -> Outgoing:
        """What sends to rooms (there once started)."""
        return started(self._out)

    @property
    def reactions(self) -> Reactions:
        """The options shown as reactions under the bot's messages (there once started)."""
        return started(self._reactions)

    @property
    def rooms(self) -> Rooms:
        """Which rooms mnemo is in and whose each event is (there once started)."""
        return started(self._room_guide)

    @property
    def syncing(self) -> Syncing:
        """The sync loop (there once started)."""
        return started(self._syncing)

    # --- lifecycle ------------------------------------------------------------------------------

    async def start(self) -> None:
        """Log in, record the first sync (not answering history on a first start), answer, then sync on."""
        self._warn_if_closed()
        if self.config.encryption and not E2E_AVAILABLE:
            raise ConfigError("Matrix encryption needs matrix-nio[e2e]: pip install 'matrix-nio[e2e]'.")
        logging.getLogger("nio.events.misc").addFilter(FIRST_LINE)  # an event nio cannot read: one line, no content
        self.client = AsyncClient(self.config.homeserver, self.me, store_path=str(self.data_dir),
                                  config=client_config(self.config))
        self._out = Outgoing(self.client)
        self._keys = WaitingForKeys(self.client, self.clock, self.crypto)
        self._reactions = Reactions(self._out, self.engine.store.choices, self.clock, self.engine.store.reactions)
        self._room_guide = Rooms(self.client, self.me, self._out, self.access, self.config.allowed_rooms, self.clock)
        self._syncing = Syncing(self.client, self.session, self.inbox, self.rooms, self.reactions, self._keys,
                                self._out, self._handle, self.clock, self.config.timeline_limit,
                                sync_lease(self.engine.store.leases, self.config.worker, self.clock)
                                if self.config.worker else None)
        try:
            await log_in(self.session, self.client, self.config, self.crypto, self.clock)
            await self.rooms.resolve()
            self.rooms.companion_names = await self._companion_names()
            await self.inbox.prune(self.clock())
            await self.engine.store.choices.prune(self.clock())
            await self.engine.store.reactions.prune(self.clock())
            await self.syncing.first()
        except (TimeoutError, aiohttp.ClientError) as exc:
            await self.client.close()
            raise ConfigError(f"The Matrix homeserver {self.config.homeserver} (MNEMO_MATRIX_HOMESERVER) "
                              f"is unreachable: {exc or type(exc).__name__}.") from exc
        except BaseException:
            await self.client.close()
            raise
        self.syncing.start()
        self.access.start_welcoming(self.name, self._welcome)  # users approved by `mnemo pair approve`
        log.info("matrix channel running as %s (device %s, encryption %s)", self.me, self.client.device_id,
                 "on" if self.client.olm is not None else "off")

    def crypto_report(self) -> dict[str, object]:
        """What /healthz says of the channel's end-to-end encryption."""
        return self.crypto.report(self.client)

    async def stop(self) -> None:
        """Let the events in hand be answered (for a while), stop syncing and close the connection."""
        await self.access.stop_welcoming()
        if self._syncing is not None:
            await self._syncing.stop()
        if self.client is not None:
            await self.client.close()

    async def _companion_names(self) -> tuple[str, ...]:
        """The companion's names (its record's and the configured one), which count as a mention in rooms."""
        config = self.engine.config
        companion = await self.engine.store.companions.get(config.companion_id)
        return tuple(dict.fromkeys(n for n in (companion.name if companion else "", config.companion_name) if n))

    # --- handling ---------------------------------------------------------------------------------

    async def _handle(self, item: Received) -> bool:
        """Answer one event; False while it waits (an encrypted event whose key has not come yet).

        A failure is logged and told in the room (never to an unknown user).
        """
        assert self.client is not None
        room, event = self.client.rooms.get(item.room_id), item.event
        if room is None:
            log.warning("event %s is in room %s, which mnemo is no longer in", event.event_id, item.room_id)
            return True
        if isinstance(event, MegolmEvent):
            opened = await self._opened(room, item, event)
            if not isinstance(opened, Received):
                return opened
            item, event = opened, opened.event
        if root := thread_root(event.source.get("content", {})):  # mnemo's own notices on it go into its thread
            self._threads[event.event_id] = InThread(root, event.event_id)
        try:
            if is_edit(event.source.get("content", {})):  # of a text or a caption: answered only in a crisis
                await self._on_edit(room, event, item.route, item.replayed)
            elif isinstance(event, (RoomMessageText, RoomMessageEmote)):
                await self._on_text(room, event, item.route, item.replayed)
            elif isinstance(event, ReactionEvent):
                await self._on_reaction(room, event, item.route)
            elif isinstance(event, RedactionEvent):
                await self._on_redaction(event, item.route)
            elif isinstance(event, (RoomMessageImage, RoomEncryptedImage)):
                await self._on_image(room, event, item.route, item.replayed)
            elif isinstance(event, (RoomMessageMedia, RoomEncryptedMedia)) and media_of(event) is not None:
                await self._on_media(room, event, item.route, item.replayed)
            elif isinstance(event, (RoomMessageMedia, RoomEncryptedMedia)) and item.route.kind == "private":
                await self._tell(room.room_id, t(self.lang, "not_text_kind"), event.event_id, "kind")
        except Exception:
            log.exception("matrix event %s in %s failed", event.event_id, item.room_id)
            if item.route.kind != "stranger":
                await self._tell_failure(item.room_id, event.event_id)
        finally:
            self._threads.pop(event.event_id, None)
        return True

    # --- encrypted events without their key ---------------------------------------------------------

    async def _opened(self, room: MatrixRoom, item: Received, event: MegolmEvent) -> Received | bool:
        """The encrypted event decrypted and routed again; else True when it is done with, False while it waits.

        Only a person's own direct room is told when it is given up: in a room of many, mnemo cannot
        know whether it was addressed.
        """
        keys = self._keys
        if keys is None or self.client is None or self.client.olm is None:
            self.syncing.warn_unreadable_rooms()
            return True
        readable = keys.decrypt(event)
        if readable is None:
            if not await keys.keep(item, event):
                return False
            await self.engine.store.failures.add("matrix.unreadable")  # given up: counted for `mnemo doctor`
            if item.route.kind == "private":  # the cause on mnemo's side: the person is not asked to write again
                text = t(self.lang, "matrix_undecryptable_ours" if keys.ours(event) else "matrix_undecryptable")
                await self._say(room.room_id, text, reply_to=event.event_id,
                                txn=transaction_id(event.event_id, "unreadable"))
            return True
        route = await self.rooms.route(room, readable, self.reactions.concerns)
        return dataclasses.replace(item, event=readable, route=route) if route is not None else True

    # --- texts --------------------------------------------------------------------------------------

    async def _on_text(self, room: MatrixRoom, event: RoomMessageText | RoomMessageEmote, route: Route,
                       replayed: bool) -> None:
        """A text: an unknown user's gets a pairing answer; any other takes the shared turn (bot/channels/base.py)."""
        content = event.source.get("content", {})
        if route.kind == "stranger":
            answer = await self.access.turn_away(self.name, event.sender, self.rooms.sender_name(room, event.sender))
            if answer is not None:
                await self._tell(room.room_id, answer, event.event_id, "stranger")
            return
        body = strip_reply_fallback(event.body) if replied_to(content) else event.body
        await self.take_text(await self._message_turn(room, event, route, replayed, body, commands=True))

    async def _on_image(self, room: MatrixRoom, event: ImageEvent, route: Route, replayed: bool) -> None:
        """A picture (m.image, encrypted too): downloaded unless too large, and answered with its caption."""
        attachment = await picture_of(started(self.client), event, self.engine.config.image_max_bytes)
        text = caption_of(event.source.get("content", {}))
        await self.take_text(await self._message_turn(room, event, route, replayed, text, attachment=attachment))

    async def _on_edit(self, room: MatrixRoom, event: Event, route: Route, replayed: bool) -> None:
        """An edit of a text or a caption: answered as a message of its own (with the help line) only in a crisis."""
        text = edited_text(event.source.get("content", {}))
        if route.kind != "stranger" and await self.edit_in_crisis(text, event.event_id):
            await self.take_text(await self._message_turn(room, event, route, replayed, text))

    async def _on_media(self, room: MatrixRoom, event: RoomMessageMedia | RoomEncryptedMedia, route: Route,
                        replayed: bool) -> None:
        """A voice note (m.audio, a voice message, an audio file) or a document (m.file: a PDF, a text), encrypted too:
        downloaded unless the engine cannot take it, then the shared turn (its caption as the text; never a command)."""
        found, content = media_of(event), event.source.get("content", {})
        if route.kind == "stranger" or found is None:
            return
        data = await self.out.download(event) if self.fetches(found) else b""
        attachment = dataclasses.replace(found, data=data, size=found.size if found.size else len(data))
        text = media_caption(content)
        await self.take_text(await self._message_turn(room, event, route, replayed, text, attachment=attachment))

    # --- reactions as buttons ---------------------------------------------------------------------

    async def _show_pressed(self, room_id: str, scope: str, pressed: Pressed, answering: str,
                            owner: str | None) -> None:
        """Answer a chosen reaction: a new page with its own choices, or the notice as a message."""
        shows = after_press(pressed)
        if isinstance(shows, Reply):
            await self._deliver(room_id, scope, shows, answering=answering, owner=owner)
        elif shows:
            await self._tell(room_id, shows, answering, "notice")

    # --- outgoing ---------------------------------------------------------------------------------

    async def send(self, user_id: str, text: str, buttons: Sequence[Sequence[Button]] | None = None) -> None:
        """Push a message to an allowed user's direct room (created when there is none); never to a room of many."""
        if not await self._may_push(user_id):
            return
        room_id = await self.rooms.direct_room(user_id, self.syncing.next_sync)
        rows = tuple(tuple(row) for row in buttons or ())
        sent = await self._deliver(room_id, user_id, Reply((text,), buttons=rows), split=False,
                                   owner=owner_of(rows, user_id))
        await self.engine.delivered(user_id, self.name, sent, text=text)

    async def _say(self, room_id: str, text: str, reply_to: str | None = None, txn: str | None = None) -> str:
        """Send one of the bot's own texts (its commands written with '!'); its event id."""
        return await self.out.text(room_id, bang(text), reply_to, txn)

    async def _deliver(self, room_id: str, scope: str, reply: Reply, *, split: bool = True,
                       shown: Shown[str] | None = None, reply_to: str | None = None, owner: str | None = None,
                       answering: str | None = None, thread: InThread | None = None) -> list[str]:
        """Show a reply: up to three bubbles (each split at 16,000 characters), reactions for its buttons, its document;
        the messages that show its text.

        A part already shown (the preview, or a message sent before a crash) is edited into place instead of
        sent again, and each new message is recorded in `shown` as soon as it is sent. A reply to an event
        (`shown`'s or `answering`) sends each part with a transaction id derived from the event and the part.
        The reactions' choice belongs to `owner` (None: to anyone let in; see `commands.owner_of`). A reply to a
        message in a thread goes into the thread.
        """
        answering = shown.event_id if shown is not None else answering
        bubbles = fit_messages(reply.bubbles) if split else tuple(reply.bubbles)
        choices, hint = reaction_choices(reply.buttons, self.lang)
        if hint:
            bubbles = bubbles[:-1] + ("\n\n".join(bubbles[-1:] + (hint,)),)
        chunks = [chunk for bubble in bubbles for chunk in split_message(bang(bubble))]
        shown_as = await self.out.parts(room_id, chunks, shown=shown, reply_to=reply_to, answering=answering,
                                        thread=thread)
        if choices and shown_as:
            await self.reactions.offer(room_id, await self.engine.scope_for(scope), shown_as[-1], choices, owner,
                                       question_of(reply.buttons))
        if reply.document is not None:
            document, heading = reply.document, t(self.lang, "export_as_text")
            txn = transaction_id(answering, "document", document.filename) if answering else None
            await show_once(shown, len(chunks), lambda: self.out.file(room_id, document, heading, txn, thread))
        if reply.voice is not None:  # after the text, which stays searchable (and was maybe streamed)
            voice, body = reply.voice, t(self.lang, "voice_body")
            spoken = transaction_id(answering, "voice") if answering else None
            try:
                await show_once(shown, len(chunks) + (reply.document is not None),
                                lambda: self.out.voice(room_id, voice, body, spoken, thread))
            except MatrixError as exc:  # the text went anyway
                log.warning("the voice note for %s could not be sent; the reply went as text only: %s", room_id, exc)
        return shown_as

    # --- the wire of the shared turn --------------------------------------------------------------------

    def _message_id(self, recorded: str) -> str:
        return recorded

    def _preview(self, turn: Turn[str, str], shown: Shown[str]) -> LivePreview[str] | None:
        streams = self.config.streaming and not turn.command
        return self.out.preview(turn.where, turn.reply_to, turn.group, shown, in_thread(turn)) if streams else None

    def _progress(self, preview: LivePreview[str] | None) -> OnText | None:
        """What hands a streamed reply's text to its preview, commands written with '!'."""
        return None if preview is None else lambda text: preview.update(bang(text))

    async def _indicate(self, where: str, on: bool) -> None:
        await self.out.indicate(where, on)

    async def _tell(self, where: str, text: str, answering: str | None = None, why: str = "") -> None:
        thread = self._threads.get(answering) if answering else None  # a notice on a thread's message goes there
        await self.out.text(where, bang(text), None, transaction_id(answering, why) if answering else None, thread)

    async def _send_now(self, turn: Turn[str, str], text: str) -> str:
        return await self.out.text(turn.where, bang(text), turn.reply_to, transaction_id(turn.event, "help"),
                                   in_thread(turn))

    async def _greet(self, user_id: str, text: str) -> None:
        await self.send(user_id, text)

    async def _show_reply(self, turn: Turn[str, str], reply: Reply, shown: Shown[str], owner: str | None) -> list[str]:
        if reply.closes:
            await self.reactions.take_away(await self.engine.scope_for(turn.scope), reply.closes)
        return await self._deliver(turn.where, turn.scope, reply, shown=shown, reply_to=turn.reply_to, owner=owner,
                                   thread=in_thread(turn))

    async def _react(self, where: str, message: str, emoji: str) -> None:
        key = emoji_key(emoji)
        await self.out.event(where, "m.reaction", reaction_content(message, key), transaction_id(message, "react", key))
