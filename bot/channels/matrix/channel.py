"""The Matrix channel: matrix-nio in front of the engine and the commands.

Direct rooms are for allowed users; an unknown user who invites the bot to a direct room or writes
there gets a pairing code. In allowed rooms mnemo answers only when mentioned or replied to, with the
room's own memory. What is new is decided by the sync token alone: each sync's events are recorded in
the inbox, then the token is saved, then the events are answered and marked handled, so a restart
neither loses nor repeats a message, whatever the host clock says. Each message sent in answer to an
event carries a transaction id derived from that event, so a send repeated after a crash shows nothing twice.

An encrypted event whose key has not arrived stays in the inbox and is answered once it can be read
(bot/matrix_keys.py); a person whose message is given up is told so in their direct room. Buttons become
reactions (bot/matrix_choices.py): kept in the database, owned by the person who asked, redacted once decided.
"""
from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import aiohttp
from nio import (
    AsyncClient,
    AsyncClientConfig,
    ErrorResponse,
    MatrixRoom,
    MegolmEvent,
    ReactionEvent,
    RoomCreateResponse,
    RoomEncryptedMedia,
    RoomMessageEmote,
    RoomMessageMedia,
    RoomMessageText,
    RoomPreset,
    SyncResponse,
)
from nio.crypto import ENCRYPTION_ENABLED

from bot.channels.access import Access, AccessConfig, ApprovedUser, UnknownUsers
from bot.channels.matrix.choices import Reactions
from bot.channels.matrix.keys import WaitingForKeys
from bot.channels.matrix.messages import (
    dm_partner,
    failure,
    fit_messages,
    is_edit,
    normalize_key,
    reaction_choices,
    replied_to,
    split_message,
    strip_reply_fallback,
    transaction_id,
    with_bang_commands,
    without_mention,
)
from bot.channels.matrix.outgoing import Outgoing, Shown
from bot.channels.matrix.rooms import Received, Rooms, Route, from_inbox, inbox_payload
from bot.channels.matrix.session import Session
from bot.channels.streaming import LivePreview
from bot.commands.call import Pressed
from bot.commands.catalog import COMMANDS, changes_memory, owner_of
from bot.commands.runner import Commands
from bot.conversation.engine import Button, Engine, Incoming, Reply
from bot.conversation.replies import Document, question_of
from bot.errors import ConfigError, MatrixError
from bot.llm.port import OnText
from bot.texts import t
from memory.pairing import is_group_scope

log = logging.getLogger(__name__)

E2E_AVAILABLE: bool = ENCRYPTION_ENABLED  # matrix-nio[e2e] (vodozemac) is installed
SYNC_TIMEOUT_MS = 30_000
TIMELINE_LIMIT = 50  # events per room and sync; an older gap is fetched page by page
STOP_GRACE = 10.0  # seconds stop() waits for the events in hand to be answered
RETRIES = 3  # nio's retries of a request that cannot connect (its default is forever)
ENCRYPTION_STATE = {"type": "m.room.encryption", "state_key": "", "content": {"algorithm": "m.megolm.v1.aes-sha2"}}


@dataclass(frozen=True)
class MatrixConfig:
    """The Matrix channel's part of the settings."""

    homeserver: str
    user_id: str
    password: str | None = None
    access_token: str | None = None
    allowed_users: frozenset[str] = frozenset()
    admins: frozenset[str] = frozenset()  # Matrix ids that may approve pairing codes with !pair
    unknown_users: UnknownUsers = "pair"
    pairing_minutes: float = 10.0
    allowed_rooms: frozenset[str] = frozenset()  # room ids ('!abc:example.org') or aliases ('#family:example.org')
    streaming: bool = True
    data_dir: Path = Path("matrix")
    device_name: str = "mnemo"
    encryption: bool = E2E_AVAILABLE
    timeline_limit: int = TIMELINE_LIMIT


def access_config(config: MatrixConfig) -> AccessConfig:
    """The access part of the Matrix settings (admins of other channels are left out)."""
    return AccessConfig(allowed=frozenset(config.allowed_users),
                        admins=frozenset(a for a in config.admins if a.startswith("@")),
                        unknown_users=config.unknown_users, pairing_minutes=config.pairing_minutes)


def _shown_with_bang(preview: LivePreview[str] | None) -> OnText | None:
    """What hands a streamed reply's text to its preview, commands written with '!'."""
    if preview is None:
        return None
    live = preview

    async def show(text: str) -> None:
        await live.update(bang(text))

    return show


def bang(text: str) -> str:
    """A bot text as Matrix shows it: its commands written with '!' (clients keep '/…' for themselves)."""
    return with_bang_commands(text, (*COMMANDS, "pair"))  # /pair is the admins' command beside the others


# --- the channel ------------------------------------------------------------------------------------


class MatrixChannel:
    """Answers allowed Matrix users in direct rooms and mentions in allowed rooms; pushes messages on request."""

    name = "matrix"

    def __init__(self, engine: Engine, commands: Commands, config: MatrixConfig,
                 clock: Callable[[], float] = time.time) -> None:
        self.engine = engine
        self.commands = commands
        self.config = config
        self.clock = clock
        self.lang = engine.config.language
        self.access = Access(engine.store.access, access_config(config), self.lang, clock)
        self.inbox = engine.store.inbox
        self.data_dir = config.data_dir
        self.session = Session(config.data_dir, config.homeserver, config.user_id)
        self.client: AsyncClient | None = None
        self._out: Outgoing | None = None
        self._room_guide: Rooms | None = None
        self._task: asyncio.Task[None] | None = None
        self._synced = asyncio.Event()
        self._last_room: dict[str, str] = {}  # user id -> the direct room they last wrote in
        self._keys: WaitingForKeys | None = None
        self._reactions: Reactions | None = None
        self._warned_encrypted: set[str] = set()  # rooms already named in the log as unreadable
        self._recover = True  # load what the inbox holds unanswered before the next sync (at start, after a failure)
        self._token: str | None = None
        self._idle = asyncio.Event()
        self._idle.set()
        self._stopping = False

    @property
    def me(self) -> str:
        """The bot's own Matrix id."""
        return self.config.user_id

    @property
    def out(self) -> Outgoing:
        """What sends to rooms (there once started)."""
        assert self._out is not None, "the Matrix channel is not started"
        return self._out

    @property
    def reactions(self) -> Reactions:
        """The options shown as reactions under the bot's messages (there once started)."""
        assert self._reactions is not None, "the Matrix channel is not started"
        return self._reactions

    @property
    def rooms(self) -> Rooms:
        """Which rooms mnemo is in and whose each event is (there once started)."""
        assert self._room_guide is not None, "the Matrix channel is not started"
        return self._room_guide

    # --- lifecycle ------------------------------------------------------------------------------

    async def start(self) -> None:
        """Log in, record the first sync (not answering history on a first start), answer, then sync on."""
        if not self.config.allowed_users and self.config.unknown_users != "pair":
            log.warning("MNEMO_MATRIX_ALLOWED_USERS is empty and pairing is off: mnemo will answer nobody")
        if self.config.encryption and not E2E_AVAILABLE:
            raise ConfigError("Matrix encryption needs matrix-nio[e2e]: pip install 'matrix-nio[e2e]'.")
        self.data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        # The sync token is saved by this channel, after the events are recorded; nio would save it earlier.
        # Rate limits are waited out here (Outgoing.patiently), where a send can be given up or skipped.
        config = AsyncClientConfig(encryption_enabled=self.config.encryption, store_sync_tokens=False,
                                   max_timeouts=RETRIES, max_limit_exceeded=0)
        self.client = AsyncClient(self.config.homeserver, self.me, store_path=str(self.data_dir), config=config)
        self._out = Outgoing(self.client)
        self._keys = WaitingForKeys(self.client, self.clock)
        self._reactions = Reactions(self._out, self.engine.store.choices, self.clock)
        self._room_guide = Rooms(self.client, self.me, self._out, self.access, self.config.allowed_rooms, self.clock)
        self._stopping, self._recover = False, True
        try:
            await self.session.log_in(self.client, self.config.password, self.config.access_token,
                                      self.config.device_name)
            if self.client.olm is not None and self.client.should_upload_keys:
                await self.client.keys_upload()
            await self.rooms.resolve()
            self.rooms.companion_names = await self._companion_names()
            await self.inbox.prune(self.clock())
            await self.engine.store.choices.prune(self.clock())
            self._token = self.session.load_token()
            await self._sync_and_handle(first=True, answer=self._token is not None)
        except (TimeoutError, aiohttp.ClientError) as exc:
            await self.client.close()
            raise ConfigError(f"The Matrix homeserver {self.config.homeserver} (MNEMO_MATRIX_HOMESERVER) "
                              f"is unreachable: {exc or type(exc).__name__}.") from exc
        except BaseException:
            await self.client.close()
            raise
        self._task = asyncio.create_task(self._run(), name="matrix-sync")
        self.access.start_welcoming(self.name, self._welcome)  # users approved by `mnemo pair approve`
        log.info("matrix channel running as %s (device %s, encryption %s)", self.me, self.client.device_id,
                 "on" if self.client.olm is not None else "off")

    async def stop(self) -> None:
        """Let the events in hand be answered (for a while), stop syncing and close the connection."""
        self._stopping = True
        await self.access.stop_welcoming()
        try:
            await asyncio.wait_for(self._idle.wait(), STOP_GRACE)
        except TimeoutError:
            log.warning("stopping while still answering; the inbox keeps the rest for the next start")
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    raise
            self._task = None
        if self.client is not None:
            await self.client.close()

    async def _companion_names(self) -> tuple[str, ...]:
        """The companion's names (its record's and the configured one), which count as a mention in rooms."""
        config = self.engine.config
        companion = await self.engine.store.companions.get(config.companion_id)
        return tuple(dict.fromkeys(n for n in (companion.name if companion else "", config.companion_name) if n))

    async def _leftovers(self) -> list[Received]:
        """The events recorded but not answered when mnemo last stopped (or crashed, or a sync failed).

        They include the encrypted events still waiting for their key, which are tried again with them.
        """
        found = []
        if self._keys is not None:
            self._keys.clear()
        for entry in await self.inbox.unhandled(self.name):
            item = from_inbox(entry.payload or "null")
            if item is None:  # a kind of event no longer answered
                await self.inbox.done(self.name, entry.event_id, self.clock())
            else:
                found.append(dataclasses.replace(item, received_at=entry.received_at))
        if found:
            log.warning("answering %d Matrix events recorded but not answered before", len(found))
        return found

    # --- syncing ----------------------------------------------------------------------------------

    async def _run(self) -> None:
        """Sync until cancelled; a failing sync is logged and retried with growing pauses."""
        failures = 0
        while not self._stopping:
            try:
                await self._sync_and_handle(first=False, answer=True)
                failures = 0
            except Exception as exc:  # the loop must outlive any one failure; each is logged
                failures, self._recover = failures + 1, True
                pause = min(60, 2 ** failures)
                log.warning("matrix sync failed (%d in a row), next try in %d s: %s", failures, pause, exc,
                            exc_info=failures == 1)
                await asyncio.sleep(pause)

    async def _sync_and_handle(self, first: bool, answer: bool) -> None:
        """One sync: answer invites, record the new events, save the token, then answer and mark them handled.

        Events recorded earlier but not answered (the last run stopped, crashed, or a sync failed half-way)
        are answered first; they are read before this sync's events are recorded, so none comes twice.
        Encrypted events waiting for their key come next: this sync may have brought it.
        """
        assert self.client is not None
        client, since = self.client, self._token
        leftovers = await self._leftovers() if self._recover else []
        leftovers += self._keys.items() if self._keys is not None else []
        self._recover = False
        limit = self.config.timeline_limit if since else 1
        response = await self.out.patiently(lambda: client.sync(
            timeout=0 if first else SYNC_TIMEOUT_MS, since=since, full_state=True if first else None,
            sync_filter={"room": {"timeline": {"limit": limit}}},
        ), "sync")
        if not isinstance(response, SyncResponse):
            raise MatrixError(f"sync failed: {failure(response)}")
        self._idle.clear()
        try:
            await self._keep_keys()
            for room_id, invite in response.rooms.invite.items():
                await self.rooms.on_invite(room_id, invite.invite_state)
            received: list[Received] = []
            if answer:
                for room_id, info in response.rooms.join.items():
                    events = await self.rooms.missed(room_id, info.timeline, since, self.config.timeline_limit)
                    received += await self.rooms.received(room_id, events, self.reactions.open_under)
            elif response.rooms.join:
                log.info("first start: the history of %d rooms is not answered", len(response.rooms.join))
            now = self.clock()
            new = set(await self.inbox.record(self.name, [(r.event.event_id, inbox_payload(r)) for r in received], now))
            received = [dataclasses.replace(r, received_at=now) for r in received if r.event.event_id in new]
            self.session.save_token(response.next_batch)
            self._token = response.next_batch
            self._warn_unreadable_rooms()
            await self._answer([*leftovers, *received])
            await self.rooms.greet()
        finally:
            self._idle.set()
        self._synced.set()
        self._synced = asyncio.Event()

    async def _answer(self, items: Sequence[Received]) -> None:
        """Answer events: one room's one after another, different rooms at the same time."""
        by_room: dict[str, list[Received]] = {}
        for item in items:
            by_room.setdefault(item.room_id, []).append(item)
        await asyncio.gather(*(self._answer_room(room_items) for room_items in by_room.values()))

    async def _answer_room(self, items: Sequence[Received]) -> None:
        for item in items:
            if await self._handle(item):
                await self.inbox.done(self.name, item.event.event_id, self.clock())

    async def _keep_keys(self) -> None:
        """The encryption chores of a sync: send queued to-device messages, upload, query and claim keys."""
        client = self.client
        if client is None or client.olm is None:
            return
        responses: list[object] = [await client.send_to_device_messages()]
        if client.should_upload_keys:
            responses.append(await client.keys_upload())
        if client.should_query_keys:
            responses.append(await client.keys_query())
        if client.should_claim_keys:
            responses.append(await client.keys_claim(client.get_users_for_key_claiming()))
        for response in responses:
            for item in response if isinstance(response, list) else [response]:
                if isinstance(item, ErrorResponse):
                    log.warning("matrix key maintenance failed: %s", failure(item))

    def _warn_unreadable_rooms(self) -> None:
        """Say once per room when it is encrypted but this process cannot decrypt."""
        assert self.client is not None
        if self.client.olm is not None:
            return
        for room in self.client.rooms.values():
            if room.encrypted and room.room_id not in self._warned_encrypted:
                self._warned_encrypted.add(room.room_id)
                log.warning("room %s is encrypted, but end-to-end encryption is off (it needs matrix-nio[e2e]); "
                            "mnemo cannot read or answer messages there", room.room_id)

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
        try:
            if isinstance(event, (RoomMessageText, RoomMessageEmote)):
                await self._on_text(room, event, item.route, item.replayed)
            elif isinstance(event, ReactionEvent):
                await self._on_reaction(room, event, item.route)
            elif isinstance(event, (RoomMessageMedia, RoomEncryptedMedia)) and item.route.kind == "private":
                await self._say(room.room_id, t(self.lang, "not_text_kind"), txn=transaction_id(event.event_id, "kind"))
        except Exception:
            log.exception("matrix event %s in %s failed", event.event_id, item.room_id)
            if item.route.kind != "stranger":
                await self._tell_failure(item.room_id, event.event_id)
        return True

    # --- encrypted events without their key ---------------------------------------------------------

    async def _opened(self, room: MatrixRoom, item: Received, event: MegolmEvent) -> Received | bool:
        """The encrypted event decrypted and routed again; else True when it is done with, False while it waits.

        Only a person's own direct room is told when it is given up: in a room of many, mnemo cannot
        know whether it was addressed.
        """
        keys = self._keys
        if keys is None or self.client is None or self.client.olm is None:
            self._warn_unreadable_rooms()
            return True
        readable = keys.decrypt(event)
        if readable is None:
            if not await keys.keep(item, event):
                return False
            if item.route.kind == "private":
                await self._say(room.room_id, t(self.lang, "matrix_undecryptable"), reply_to=event.event_id,
                                txn=transaction_id(event.event_id, "unreadable"))
            return True
        route = await self.rooms.route(room, readable, self.reactions.open_under)
        return dataclasses.replace(item, event=readable, route=route) if route is not None else True

    # --- texts --------------------------------------------------------------------------------------

    async def _on_text(self, room: MatrixRoom, event: RoomMessageText | RoomMessageEmote, route: Route,
                       replayed: bool) -> None:
        """A text: an unknown user's, an admin's !pair, a !command or /command, or a message for the engine."""
        content = event.source.get("content", {})
        if is_edit(content):
            log.info("edit %s ignored; the original was already answered", event.event_id)
            return
        body = strip_reply_fallback(event.body) if replied_to(content) else event.body
        if route.kind == "stranger":
            answer = await self.access.turn_away(self.name, event.sender, self.rooms.sender_name(room, event.sender))
            if answer is not None:
                await self._say(room.room_id, answer, txn=transaction_id(event.event_id, "stranger"))
            return
        group = route.kind == "group"
        admin = self.access.is_admin(event.sender)
        text = without_mention(body, self.me, self.rooms.names(room)) if group else body
        command = text.lstrip()[:1] in ("!", "/")
        if group and command and not admin:
            log.info("command from %s, who is no admin, ignored in room %s", event.sender, room.room_id)
            return
        if group and not command:
            text = f"{self.rooms.sender_name(room, event.sender)}: {text}"
        if not group:
            self._last_room[event.sender] = room.room_id
            if await self._admin(room.room_id, event.event_id, event.sender, text):
                return
        reply_to = event.event_id if group else None
        incoming = Incoming(route.scope, text, channel=self.name, channel_message_id=event.event_id,
                            sender=event.sender, may_decide=admin or not group)
        earlier = await self.inbox.shown(self.name, event.event_id) if replayed else []
        texts = await self.inbox.shown_texts(self.name, event.event_id) if replayed else []
        shown = Shown(self.inbox, self.name, event.event_id, earlier, texts)
        streams = self.config.streaming and not command
        preview = self.out.preview(room.room_id, reply_to, group, shown) if streams else None
        try:
            async with self.out.typing(room.room_id, preview):
                ref = event.event_id
                reply = await self.commands.run(route.scope, text, channel=self.name, ref=ref) if command else None
                ran_command = reply is not None
                if reply is None:
                    reply = await self.engine.handle(incoming, on_progress=_shown_with_bang(preview))
        finally:
            if preview is not None:
                await preview.close()
        if reply is None and replayed:
            reply = await self.engine.earlier_reply(incoming)  # recorded before a crash, maybe not (all) sent
        if reply is None:
            log.info("event %s was answered before; skipped", event.event_id)
            return
        async with self._once(route.scope, ref) if ran_command else contextlib.nullcontext():
            if reply.closes:
                await self.reactions.take_away(await self.engine.scope_for(route.scope), reply.closes)
            await self._deliver(room.room_id, route.scope, reply, shown=shown, reply_to=reply_to,
                                owner=owner_of(reply.buttons, event.sender, incoming.may_decide))

    @contextlib.asynccontextmanager
    async def _once(self, scope: str, ref: str) -> AsyncIterator[None]:
        """Mark the answer of a command or press delivered after the block (or its failure), so its kept copy goes.

        Not when the block is cancelled (shutdown): the event is not handled then and its replay delivers it.
        """
        try:
            yield
        except Exception:  # the failure is told and the event counts as handled
            await self.commands.delivered(scope, self.name, ref)
            raise
        await self.commands.delivered(scope, self.name, ref)

    async def _admin(self, room_id: str, event_id: str, user_id: str, text: str) -> bool:
        """Run an admin's !pair command; True when it was one."""
        answer = await self.access.admin_command(user_id, text)
        if answer is None:
            return False
        await self._say(room_id, answer.text, txn=transaction_id(event_id, "admin"))
        if answer.approved is not None:
            await self._welcome(answer.approved)
        return True

    async def _welcome(self, user: ApprovedUser) -> None:
        """Tell an approved user (from a chat or the command line) that they can write now."""
        if user.channel != self.name:
            return
        try:
            await self.send(user.user_id, t(self.lang, "paired_welcome"))
        except MatrixError as exc:
            log.warning("could not welcome %s: %s", user.user_id, exc)

    # --- reactions as buttons -------------------------------------------------------------------------

    async def _on_reaction(self, room: MatrixRoom, event: ReactionEvent, route: Route) -> None:
        """A reaction on one of the bot's open choices answers it, like pressing a button, if the reacting person may.

        The choice belongs to the person who asked (`owner_of`); in a room, someone else's reaction and a
        reaction of a member who is no admin that would change memory decide nothing and get one short answer.
        """
        choice = await self.reactions.find(event.reacts_to)
        scope = await self.engine.scope_for(route.scope)
        data = choice.options.get(normalize_key(event.key)) if choice is not None else None
        if choice is None or data is None or choice.scope_id != scope.id:
            log.info("reaction %r on %s answers no open question", event.key, event.reacts_to)
            return
        if choice.owner not in (None, event.sender):
            log.info("reaction of %s on %s, which %s was asked: refused", event.sender, event.reacts_to, choice.owner)
            refused = transaction_id(event.event_id, "refused")
            await self._say(room.room_id, t(self.lang, "choice_not_yours"), txn=refused)
            return
        admin = route.kind != "group" or self.access.is_admin(event.sender)
        ref = f"press:{event.event_id}"
        pressed = await self.commands.press(route.scope, data, admin=admin, channel=self.name, ref=ref)
        async with self._once(route.scope, ref):
            if admin or not changes_memory(data):  # else refused: the choice stays open for the one who may
                await self.reactions.take_away(scope, (*pressed.closes, choice.question), also=choice)
            await self._show_pressed(room.room_id, route.scope, pressed, event.event_id,
                                     owner_of(pressed.buttons, event.sender, admin))

    async def _show_pressed(self, room_id: str, scope: str, pressed: Pressed, answering: str,
                            owner: str | None) -> None:
        """Answer a chosen reaction: a new page with its own choices, or the notice as a message."""
        if pressed.text and (pressed.buttons or not pressed.notice):
            await self._deliver(room_id, scope, Reply((pressed.text,), buttons=pressed.buttons),
                                answering=answering, owner=owner)
        elif pressed.notice or pressed.text:
            await self._say(room_id, pressed.notice or pressed.text or "", txn=transaction_id(answering, "notice"))

    async def _tell_failure(self, room_id: str, answering: str) -> None:
        """Tell the room one short sentence after a failure (a failing send is only logged)."""
        try:
            await self._say(room_id, t(self.lang, "failed"), txn=transaction_id(answering, "failed"))
        except MatrixError as exc:
            log.warning("could not tell %s about the failure: %s", room_id, exc)

    # --- outgoing ---------------------------------------------------------------------------------

    async def send(self, user_id: str, text: str, buttons: Sequence[Sequence[Button]] | None = None) -> None:
        """Push a message to an allowed user's direct room (created when there is none); never to a room of many."""
        if is_group_scope(user_id):
            raise ValueError(f"not pushing to {user_id}: mnemo speaks first only in direct rooms")
        if not await self.access.allows(user_id):
            log.warning("not pushing to Matrix user %s: neither on MNEMO_MATRIX_ALLOWED_USERS nor paired", user_id)
            return
        room_id = await self._room_for(user_id)
        rows = tuple(tuple(row) for row in buttons or ())
        await self._deliver(room_id, user_id, Reply((text,), buttons=rows), split=False, owner=owner_of(rows, user_id))

    async def _say(self, room_id: str, text: str, reply_to: str | None = None, txn: str | None = None) -> str:
        """Send one of the bot's own texts (its commands written with '!'); its event id."""
        return await self.out.text(room_id, bang(text), reply_to, txn)

    async def _deliver(self, room_id: str, scope: str, reply: Reply, *, split: bool = True,
                       shown: Shown | None = None, reply_to: str | None = None, owner: str | None = None,
                       answering: str | None = None) -> None:
        """Show a reply: up to three bubbles (each split at 16,000 characters), reactions for its buttons, its document.

        A part already shown (the preview, or a message sent before a crash) is edited into place instead of
        sent again, and each new message is recorded in `shown` as soon as it is sent. A reply to an event
        (`shown`'s or `answering`) sends each part with a transaction id derived from the event and the part.
        The reactions' choice belongs to `owner` (None: to anyone let in; see `commands.owner_of`).
        """
        answering = shown.event_id if shown is not None else answering
        bubbles = fit_messages(reply.bubbles) if split else tuple(reply.bubbles)
        choices, hint = reaction_choices(reply.buttons, self.lang)
        if hint:
            bubbles = bubbles[:-1] + ("\n\n".join(bubbles[-1:] + (hint,)),)
        chunks = [chunk for bubble in bubbles for chunk in split_message(bang(bubble))]
        last = None
        for i, chunk in enumerate(chunks):
            txn = transaction_id(answering, str(i), chunk) if answering else None
            earlier = shown.at(i) if shown is not None else None
            edit = transaction_id(answering, f"edit{i}", chunk) if answering else None
            if earlier is not None and await self.out.finalize(room_id, earlier, chunk, edit):
                last = earlier
                continue
            last = await self.out.text(room_id, chunk, reply_to if i == 0 else None, txn)
            if shown is not None:
                await shown.put(i, last)
        if choices and last is not None:
            await self.reactions.offer(room_id, await self.engine.scope_for(scope), last, choices, owner,
                                       question_of(reply.buttons))
        if reply.document is not None and (shown is None or shown.at(len(chunks)) is None):
            await self._post(room_id, reply.document, shown, len(chunks), answering)

    async def _post(self, room_id: str, document: Document, shown: Shown | None, part: int,
                    answering: str | None) -> None:
        """Post a reply's file (its text in a message when the upload fails) and record it as shown."""
        txn = transaction_id(answering, "document", document.filename) if answering else None
        posted = await self.out.document(room_id, document, txn)
        if posted is None:
            text = document.content.decode("utf-8", errors="replace")
            posted = await self.out.text(room_id, f"{t(self.lang, 'export_as_text')}\n\n{split_message(text)[0]}",
                                         txn=txn and f"{txn}.text")
        if shown is not None:
            await shown.put(part, posted)

    async def _room_for(self, user_id: str) -> str:
        """The user's direct room: the one they last wrote in, any other one, or a new one."""
        assert self.client is not None
        known = self._last_room.get(user_id)
        if known and dm_partner(self.client.rooms.get(known), self.me) == user_id:
            return known
        rooms = [r for r in self.client.rooms.values() if dm_partner(r, self.me) == user_id]
        rooms.sort(key=lambda r: user_id in r.invited_users)  # rooms the user has joined first
        if rooms:
            self._last_room[user_id] = rooms[0].room_id
            return rooms[0].room_id
        return await self._create_room(user_id)

    async def _create_room(self, user_id: str) -> str:
        """Create a direct room with the user (encrypted when this process can) and wait until it is synced."""
        assert self.client is not None
        client = self.client
        response = await self.out.patiently(lambda: client.room_create(
            is_direct=True, invite=[user_id], preset=RoomPreset.trusted_private_chat,
            initial_state=[ENCRYPTION_STATE] if client.olm is not None else []), "creating a room")
        if not isinstance(response, RoomCreateResponse):
            raise MatrixError(f"could not create a direct room with {user_id}: {failure(response)}")
        for _ in range(3):  # the sync loop brings the new room in with its next answer
            if dm_partner(client.rooms.get(response.room_id), self.me) == user_id:
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._synced.wait(), SYNC_TIMEOUT_MS / 1000)
        else:
            raise MatrixError(f"the new room {response.room_id} with {user_id} did not arrive in a sync")
        log.info("created direct room %s with %s", response.room_id, user_id)
        self._last_room[user_id] = response.room_id
        return str(response.room_id)
