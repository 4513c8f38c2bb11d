"""The Matrix channel: matrix-nio in front of the engine and the commands, direct rooms with allowed users only."""
from __future__ import annotations

import asyncio
import contextlib
import html
import io
import json
import logging
import os
import re
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
from nio import (
    AsyncClient,
    AsyncClientConfig,
    ErrorResponse,
    Event,
    InviteMemberEvent,
    LocalProtocolError,
    LoginResponse,
    MatrixRoom,
    MegolmEvent,
    ReactionEvent,
    RoomCreateResponse,
    RoomEncryptedMedia,
    RoomMemberEvent,
    RoomMessageEmote,
    RoomMessageMedia,
    RoomMessageText,
    RoomPreset,
    RoomSendResponse,
    SendRetryError,
    SyncResponse,
    UploadResponse,
    WhoamiResponse,
)
from nio.crypto import ENCRYPTION_ENABLED

from bot.commands import Commands, Pressed
from bot.engine import Button, Document, Engine, Incoming, Reply
from bot.errors import ConfigError, MatrixError
from bot.texts import t

log = logging.getLogger(__name__)

E2E_AVAILABLE: bool = ENCRYPTION_ENABLED  # matrix-nio[e2e] (vodozemac) is installed
MAX_MESSAGES = 3
SYNC_TIMEOUT_MS = 30_000
TIMELINE_LIMIT = 50  # events per room and sync; enough for what piles up while mnemo is down
TYPING_EVERY = 20.0  # seconds; each typing notice lasts 30 s
STOP_GRACE = 10.0  # seconds stop() waits for the events in hand to be answered
RETRIES = 3  # nio's retries of a request that cannot connect (its default is forever)
EXPORT_TEXT_LIMIT = 20_000  # characters of the export shown as text when the upload fails
MAX_OPEN_CHOICES = 200
THUMBS_UP, THUMBS_DOWN = "👍", "👎"
KEYCAPS = tuple(f"{n}\ufe0f\u20e3" for n in range(1, 10)) + ("🔟",)
ENCRYPTION_STATE = {"type": "m.room.encryption", "state_key": "", "content": {"algorithm": "m.megolm.v1.aes-sha2"}}
@dataclass(frozen=True)
class MatrixConfig:
    """The Matrix channel's part of the settings."""

    homeserver: str
    user_id: str
    password: str | None = None
    access_token: str | None = None
    allowed_users: frozenset[str] = frozenset()
    data_dir: Path = Path("matrix")
    device_name: str = "mnemo"
    encryption: bool = E2E_AVAILABLE


@dataclass(frozen=True)
class Choice:
    """An open question under one of the bot's messages: who may answer, and what each reaction means."""

    user_id: str
    options: dict[str, str]  # normalized reaction key -> button data


# --- pure helpers -----------------------------------------------------------------------------------


def to_html(text: str) -> str:
    """The formatted body of a text: escaped, **bold** kept as bold, newlines as <br>."""
    escaped = html.escape(text, quote=False)
    escaped = re.sub(r"\*\*(\S(?:.*?\S)?)\*\*", r"<strong>\1</strong>", escaped)
    return escaped.replace("\n", "<br>")


def message_content(text: str) -> dict[str, Any]:
    """An m.text message with an HTML body and the plain text beside it."""
    return {"msgtype": "m.text", "body": text, "format": "org.matrix.custom.html", "formatted_body": to_html(text)}


def reaction_content(event_id: str, key: str) -> dict[str, Any]:
    """An m.reaction annotating an event with a key."""
    return {"m.relates_to": {"rel_type": "m.annotation", "event_id": event_id, "key": key}}


def normalize_key(key: str) -> str:
    """A reaction key without variation selectors and skin tones (👍🏽 counts as 👍)."""
    return re.sub("[\ufe0f\U0001f3fb-\U0001f3ff]", "", key)


def fit_messages(bubbles: Sequence[str], limit: int = MAX_MESSAGES) -> tuple[str, ...]:
    """At most `limit` messages; the last one takes the rest."""
    parts = tuple(b for b in bubbles if b.strip())
    if len(parts) <= limit:
        return parts
    return parts[: limit - 1] + ("\n\n".join(parts[limit - 1 :]),)


def reaction_choices(buttons: Sequence[Sequence[Button]], lang: str) -> tuple[list[tuple[str, str]], str]:
    """The reactions standing for buttons, as (emoji, data), and the line that explains them.

    A rule question's yes/no row becomes 👍/👎 and needs no explanation; any other buttons
    become numbered keycaps 1️⃣ … 🔟 with a line naming each (more than ten are left out).
    """
    rows = [tuple(row) for row in buttons if row]
    if len(rows) == 1 and len(rows[0]) == 2 and rows[0][0].data.startswith("rule:yes:") \
            and rows[0][1].data.startswith("rule:no:"):
        return [(THUMBS_UP, rows[0][0].data), (THUMBS_DOWN, rows[0][1].data)], ""
    pairs: list[tuple[str, str]] = []
    lines: list[str] = []
    for row in rows:
        labels = []
        for button in row:
            if len(pairs) == len(KEYCAPS):
                log.info("more than %d choices; %r has no reaction", len(KEYCAPS), button.data)
                continue
            pairs.append((KEYCAPS[len(pairs)], button.data))
            labels.append(f"{pairs[-1][0]} {button.label}")
        if labels:
            lines.append(" · ".join(labels))
    if not pairs:
        return [], ""
    return pairs, "\n".join([t(lang, "react_with")] + lines)


def strip_reply_fallback(body: str) -> str:
    """A reply's own text, without the quoted '> ' lines that older clients put in front."""
    lines = body.split("\n")
    while lines and lines[0].startswith(">"):
        lines.pop(0)
    return "\n".join(lines).strip() or body


def fresh_events(events: Sequence[Event], me: str) -> list[Event]:
    """The events after the bot's own invite or join in this batch (history before it is not answered)."""
    start = 0
    for i, event in enumerate(events):
        if isinstance(event, RoomMemberEvent) and event.state_key == me and event.membership in ("invite", "join") \
                and event.prev_membership not in ("invite", "join"):
            start = i + 1
            break
    return list(events[start:])


def dm_partner(room: MatrixRoom | None, me: str) -> str | None:
    """The other member of a direct room (exactly two members, joined or invited), else None."""
    if room is None or me not in room.users or len(room.users) != 2:
        return None
    return next(u for u in room.users if u != me)


def write_private(path: Path, text: str) -> None:
    """Write a file only its owner may read, replacing the old one in one step."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def _failure(response: object) -> str:
    if isinstance(response, ErrorResponse):
        return f"{response.status_code or ''} {response.message}".strip()
    return repr(response)


# --- the channel ------------------------------------------------------------------------------------


class MatrixChannel:
    """Answers allowed Matrix users in their direct rooms; pushes messages on request."""

    name = "matrix"

    def __init__(self, engine: Engine, commands: Commands, config: MatrixConfig) -> None:
        self.engine = engine
        self.commands = commands
        self.config = config
        self.lang = engine.config.language
        self.allowed = frozenset(config.allowed_users)
        self.data_dir = config.data_dir
        self.session_path = self.data_dir / "session.json"
        self.token_path = self.data_dir / "sync_token"
        self.client: AsyncClient | None = None
        self._task: asyncio.Task[None] | None = None
        self._synced = asyncio.Event()
        self._rooms: dict[str, str] = {}  # user id -> the direct room they last wrote in
        self._choices: OrderedDict[str, Choice] = OrderedDict()  # event id -> open question
        self._warned_encrypted: set[str] = set()  # rooms already named in the log as unreadable
        self._warned_not_direct: set[str] = set()
        self._token: str | None = None
        self._idle = asyncio.Event()
        self._idle.set()
        self._stopping = False

    @property
    def me(self) -> str:
        """The bot's own Matrix id."""
        return self.config.user_id

    def _words(self, key: str) -> str:
        return t(self.lang, key)

    # --- lifecycle ------------------------------------------------------------------------------

    async def start(self) -> None:
        """Log in, do the first sync (not answering history on a first start), then sync in the background."""
        if not self.allowed:
            log.warning("MNEMO_MATRIX_ALLOWED_USERS is empty: mnemo will join no room and answer nobody")
        if self.config.encryption and not E2E_AVAILABLE:
            raise ConfigError("Matrix encryption needs matrix-nio[e2e]: pip install 'matrix-nio[e2e]'.")
        self.data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        # Sync tokens are saved by this channel, after the events are handled; nio would save them before.
        config = AsyncClientConfig(encryption_enabled=self.config.encryption, store_sync_tokens=False,
                                   max_timeouts=RETRIES)
        self.client = AsyncClient(self.config.homeserver, self.me, store_path=str(self.data_dir), config=config)
        self._stopping = False
        try:
            await self._log_in(self.client)
            if self.client.olm is not None and self.client.should_upload_keys:
                await self.client.keys_upload()
            self._token = self._load_token()
            await self._sync_and_handle(first=True, answer=self._token is not None)
        except (TimeoutError, aiohttp.ClientError) as exc:
            await self.client.close()
            raise ConfigError(f"The Matrix homeserver {self.config.homeserver} (MNEMO_MATRIX_HOMESERVER) "
                              f"is unreachable: {exc or type(exc).__name__}.") from exc
        except BaseException:
            await self.client.close()
            raise
        self._task = asyncio.create_task(self._run(), name="matrix-sync")
        log.info("matrix channel running as %s (device %s, encryption %s)", self.me, self.client.device_id,
                 "on" if self.client.olm is not None else "off")

    async def stop(self) -> None:
        """Let the events in hand be answered (for a while), stop syncing and close the connection."""
        self._stopping = True
        try:
            await asyncio.wait_for(self._idle.wait(), STOP_GRACE)
        except TimeoutError:
            log.warning("stopping while still answering; the unanswered events are lost")
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

    async def _log_in(self, client: AsyncClient) -> None:
        """Use the access token, the saved session, or the password (saving the new session)."""
        if self.config.access_token:
            client.access_token = self.config.access_token
            client.restore_login(self.me, await self._whoami_device(client), self.config.access_token)
            return
        if not self.config.password:
            raise ConfigError("The matrix channel needs MNEMO_MATRIX_PASSWORD or MNEMO_MATRIX_ACCESS_TOKEN.")
        session = self._load_session()
        if session:
            client.restore_login(self.me, session["device_id"], session["access_token"])
            checked = await client.whoami()
            if isinstance(checked, WhoamiResponse):
                return
            if checked.status_code != "M_UNKNOWN_TOKEN":
                raise MatrixError(f"could not check the saved Matrix session: {_failure(checked)}")
            log.warning("the saved Matrix session no longer works; logging in again as device %s",
                        session["device_id"])
        response = await client.login(self.config.password, device_name=self.config.device_name)
        if not isinstance(response, LoginResponse):
            raise ConfigError(f"The Matrix login as {self.me} at {self.config.homeserver} failed "
                              f"({_failure(response)}); check MNEMO_MATRIX_USER_ID and MNEMO_MATRIX_PASSWORD.")
        write_private(self.session_path, json.dumps({
            "homeserver": self.config.homeserver, "user_id": response.user_id,
            "device_id": response.device_id, "access_token": response.access_token,
        }))
        log.info("logged in to Matrix as %s, new device %s", response.user_id, response.device_id)

    async def _whoami_device(self, client: AsyncClient) -> str:
        """The device of the configured access token."""
        response = await client.whoami()
        if not isinstance(response, WhoamiResponse) or response.user_id != self.me or not response.device_id:
            raise ConfigError(f"MNEMO_MATRIX_ACCESS_TOKEN does not belong to a device of {self.me} at "
                              f"{self.config.homeserver} ({_failure(response)}).")
        return response.device_id

    def _load_session(self) -> dict[str, str] | None:
        """The saved login for this homeserver and user, or None."""
        if not self.session_path.exists():
            return None
        session = json.loads(self.session_path.read_text(encoding="utf-8"))
        if session.get("homeserver") != self.config.homeserver or session.get("user_id") != self.me:
            log.info("the saved Matrix session is for another account; logging in afresh")
            return None
        return {"device_id": str(session["device_id"]), "access_token": str(session["access_token"])}

    def _load_token(self) -> str | None:
        """The sync token saved after the last handled sync, or None on a first start."""
        if not self.token_path.exists():
            return None
        return self.token_path.read_text(encoding="utf-8").strip() or None

    # --- syncing ----------------------------------------------------------------------------------

    async def _run(self) -> None:
        """Sync until cancelled; a failing sync is logged and retried with growing pauses."""
        failures = 0
        while not self._stopping:
            try:
                await self._sync_and_handle(first=False, answer=True)
                failures = 0
            except Exception as exc:  # the loop must outlive any one failure; each is logged
                failures += 1
                pause = min(60, 2 ** failures)
                log.warning("matrix sync failed (%d in a row), next try in %d s: %s", failures, pause, exc,
                            exc_info=failures == 1)
                await asyncio.sleep(pause)

    async def _sync_and_handle(self, first: bool, answer: bool) -> None:
        """One sync: join or decline invites, answer new events (when `answer`), then save the token."""
        assert self.client is not None
        limit = TIMELINE_LIMIT if self._token else 1
        response = await self.client.sync(
            timeout=0 if first else SYNC_TIMEOUT_MS, since=self._token, full_state=True if first else None,
            sync_filter={"room": {"timeline": {"limit": limit}}},
        )
        if not isinstance(response, SyncResponse):
            raise MatrixError(f"sync failed: {_failure(response)}")
        self._idle.clear()
        try:
            await self._keep_keys()
            for room_id, invite in response.rooms.invite.items():
                await self._on_invite(room_id, invite.invite_state)
            if answer:
                await asyncio.gather(*(self._on_timeline(room_id, info.timeline.events)
                                       for room_id, info in response.rooms.join.items()))
            elif response.rooms.join:
                log.info("first start: the history of %d rooms is not answered", len(response.rooms.join))
            self._warn_unreadable_rooms()
        finally:
            self._idle.set()
        write_private(self.token_path, response.next_batch)
        self._token = response.next_batch
        self._synced.set()
        self._synced = asyncio.Event()

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
                    log.warning("matrix key maintenance failed: %s", _failure(item))

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

    # --- incoming ---------------------------------------------------------------------------------

    async def _on_invite(self, room_id: str, events: Sequence[Event]) -> None:
        """Join when an allowed user invited the bot; decline anyone else's invite."""
        assert self.client is not None
        inviter = next((e.sender for e in events if isinstance(e, InviteMemberEvent)
                        and e.state_key == self.me and e.membership == "invite"), None)
        if inviter in self.allowed:
            response = await self.client.join(room_id)
            if isinstance(response, ErrorResponse):
                log.warning("could not join %s on %s's invite: %s", room_id, inviter, _failure(response))
            else:
                log.info("joined %s on %s's invite", room_id, inviter)
            return
        log.warning("declined the invite to %s from %s: not on MNEMO_MATRIX_ALLOWED_USERS", room_id, inviter)
        response = await self.client.room_leave(room_id)
        if isinstance(response, ErrorResponse):
            log.warning("could not decline the invite to %s: %s", room_id, _failure(response))

    async def _on_timeline(self, room_id: str, events: Sequence[Event]) -> None:
        """Handle a room's new events one after another; a failing event is logged and the next one handled."""
        assert self.client is not None
        room = self.client.rooms.get(room_id)
        for event in fresh_events(events, self.me):
            if room is None or event.sender == self.me or event.sender not in self.allowed:
                continue
            if dm_partner(room, self.me) != event.sender:
                if room_id not in self._warned_not_direct:
                    self._warned_not_direct.add(room_id)
                    log.info("ignoring room %s: it is not a direct room with %s", room_id, event.sender)
                continue
            try:
                await self._on_event(room, event)
            except Exception:
                log.exception("matrix event %s in %s failed", event.event_id, room_id)
                await self._tell_failure(room_id)

    async def _on_event(self, room: MatrixRoom, event: Event) -> None:
        """Route one event of an allowed user in their direct room."""
        if isinstance(event, (RoomMessageText, RoomMessageEmote)):
            await self._on_text(room, event)
        elif isinstance(event, ReactionEvent):
            await self._on_reaction(room, event)
        elif isinstance(event, MegolmEvent):
            self._on_undecryptable(room, event)
        elif isinstance(event, (RoomMessageMedia, RoomEncryptedMedia)):
            await self._send_text(room.room_id, t(self.lang, "not_text_kind"))

    async def _on_text(self, room: MatrixRoom, event: RoomMessageText | RoomMessageEmote) -> None:
        """A text: a !command or /command goes to the commands, everything else to the engine."""
        relates = event.source.get("content", {}).get("m.relates_to", {})
        if relates.get("rel_type") == "m.replace":
            log.info("edit %s ignored; the original was already answered", event.event_id)
            return
        text = strip_reply_fallback(event.body) if "m.in_reply_to" in relates else event.body
        user_id = event.sender
        self._rooms[user_id] = room.room_id
        async with self._typing(room.room_id):
            reply = await self.commands.run(user_id, text) if text.lstrip()[:1] in ("!", "/") else None
            if reply is None:
                reply = await self.engine.handle(
                    Incoming(user_id, text, channel=self.name, channel_message_id=event.event_id))
        if reply is None:
            log.info("event %s was answered before; skipped", event.event_id)
            return
        await self._deliver(room.room_id, user_id, reply)

    async def _on_reaction(self, room: MatrixRoom, event: ReactionEvent) -> None:
        """A reaction on one of the bot's questions answers it, like pressing a button."""
        choice = self._choices.get(event.reacts_to)
        data = choice.options.get(normalize_key(event.key)) if choice and choice.user_id == event.sender else None
        if data is None:
            log.info("reaction %r on %s answers no open question", event.key, event.reacts_to)
            return
        del self._choices[event.reacts_to]
        await self._show_pressed(room.room_id, event.sender, await self.commands.press(event.sender, data))

    def _on_undecryptable(self, room: MatrixRoom, event: MegolmEvent) -> None:
        """An encrypted event the bot cannot read: say so in the log (once per room without encryption)."""
        if self.client is None or self.client.olm is None:
            self._warn_unreadable_rooms()
            return
        log.warning("cannot decrypt event %s from %s in %s (session %s); its key never reached this device",
                    event.event_id, event.sender, room.room_id, event.session_id)

    async def _show_pressed(self, room_id: str, user_id: str, pressed: Pressed) -> None:
        """Answer a chosen reaction: a new page with its own choices, or the notice as a message."""
        if pressed.text and (pressed.buttons or not pressed.notice):
            await self._deliver(room_id, user_id, Reply((pressed.text,), buttons=pressed.buttons))
        elif pressed.notice or pressed.text:
            await self._send_text(room_id, pressed.notice or pressed.text or "")

    async def _tell_failure(self, room_id: str) -> None:
        """Tell the user one short sentence after a failure (a failing send is only logged)."""
        try:
            await self._send_text(room_id, self._words("failed"))
        except MatrixError as exc:
            log.warning("could not tell %s about the failure: %s", room_id, exc)

    # --- outgoing ---------------------------------------------------------------------------------

    async def send(self, user_id: str, text: str, buttons: Sequence[Sequence[Button]] | None = None) -> None:
        """Push a message to an allowed user's direct room (created when there is none); raises MatrixError."""
        if user_id not in self.allowed:
            log.warning("not pushing to Matrix user %s: not on MNEMO_MATRIX_ALLOWED_USERS", user_id)
            return
        room_id = await self._room_for(user_id)
        rows = tuple(tuple(row) for row in buttons or ())
        await self._deliver(room_id, user_id, Reply((text,), buttons=rows), split=False)

    async def _deliver(self, room_id: str, user_id: str, reply: Reply, split: bool = True) -> None:
        """Show a reply: up to three messages, reactions for its buttons, and its document."""
        bubbles = fit_messages(reply.bubbles) if split else tuple(reply.bubbles)
        choices, hint = reaction_choices(reply.buttons, self.lang)
        if hint:
            bubbles = bubbles[:-1] + ("\n\n".join(bubbles[-1:] + (hint,)),)
        last = None
        for bubble in bubbles:
            last = await self._send_text(room_id, bubble)
        if choices and last is not None:
            await self._offer(room_id, user_id, last, choices)
        if reply.document is not None:
            await self._send_document(room_id, reply.document)

    async def _offer(self, room_id: str, user_id: str, event_id: str, choices: list[tuple[str, str]]) -> None:
        """React to the bot's own message with each choice and remember what each one means."""
        self._choices[event_id] = Choice(user_id, {normalize_key(emoji): data for emoji, data in choices})
        while len(self._choices) > MAX_OPEN_CHOICES:
            self._choices.popitem(last=False)
        for emoji, _data in choices:
            await self._room_send(room_id, "m.reaction", reaction_content(event_id, emoji))

    async def _send_text(self, room_id: str, text: str) -> str:
        """Send one formatted message; its event id."""
        return await self._room_send(room_id, "m.room.message", message_content(text))

    async def _room_send(self, room_id: str, event_type: str, content: dict[str, Any]) -> str:
        """Send an event (encrypted where the room is); MatrixError when that fails."""
        assert self.client is not None
        room = self.client.rooms.get(room_id)
        if room is not None and room.encrypted and self.client.olm is None:
            raise MatrixError(f"room {room_id} is encrypted and end-to-end encryption is off; nothing sent")
        try:
            response = await self.client.room_send(room_id, event_type, content, ignore_unverified_devices=True)
        except (TimeoutError, LocalProtocolError, SendRetryError, aiohttp.ClientError) as exc:
            raise MatrixError(f"could not send to {room_id}: {exc or type(exc).__name__}") from exc
        if not isinstance(response, RoomSendResponse):
            raise MatrixError(f"could not send to {room_id}: {_failure(response)}")
        return str(response.event_id)

    async def _send_document(self, room_id: str, document: Document) -> None:
        """Upload a file and post it as m.file; when the upload fails, post the start of it as text."""
        assert self.client is not None
        room = self.client.rooms.get(room_id)
        encrypt = bool(room and room.encrypted and self.client.olm is not None)
        try:
            response, keys = await self.client.upload(
                io.BytesIO(document.content), content_type="application/json", filename=document.filename,
                encrypt=encrypt, filesize=len(document.content))
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            response, keys = exc, None
        if not isinstance(response, UploadResponse):
            log.warning("uploading %s to %s failed (%s); sending it as text", document.filename, room_id,
                        _failure(response))
            text = document.content.decode("utf-8", errors="replace")[:EXPORT_TEXT_LIMIT]
            await self._send_text(room_id, f"{self._words('export_as_text')}\n\n{text}")
            return
        content: dict[str, Any] = {
            "msgtype": "m.file", "body": document.filename, "filename": document.filename,
            "info": {"mimetype": "application/json", "size": len(document.content)},
        }
        if keys:
            content["file"] = {**keys, "url": response.content_uri}
        else:
            content["url"] = response.content_uri
        await self._room_send(room_id, "m.room.message", content)

    async def _room_for(self, user_id: str) -> str:
        """The user's direct room: the one they last wrote in, any other one, or a new one."""
        assert self.client is not None
        known = self._rooms.get(user_id)
        if known and dm_partner(self.client.rooms.get(known), self.me) == user_id:
            return known
        rooms = [r for r in self.client.rooms.values() if dm_partner(r, self.me) == user_id]
        rooms.sort(key=lambda r: user_id in r.invited_users)  # rooms the user has joined first
        if rooms:
            self._rooms[user_id] = rooms[0].room_id
            return rooms[0].room_id
        return await self._create_room(user_id)

    async def _create_room(self, user_id: str) -> str:
        """Create a direct room with the user (encrypted when this process can) and wait until it is synced."""
        assert self.client is not None
        response = await self.client.room_create(
            is_direct=True, invite=[user_id], preset=RoomPreset.trusted_private_chat,
            initial_state=[ENCRYPTION_STATE] if self.client.olm is not None else [])
        if not isinstance(response, RoomCreateResponse):
            raise MatrixError(f"could not create a direct room with {user_id}: {_failure(response)}")
        for _ in range(3):  # the sync loop brings the new room in with its next answer
            if dm_partner(self.client.rooms.get(response.room_id), self.me) == user_id:
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._synced.wait(), SYNC_TIMEOUT_MS / 1000)
        else:
            raise MatrixError(f"the new room {response.room_id} with {user_id} did not arrive in a sync")
        log.info("created direct room %s with %s", response.room_id, user_id)
        self._rooms[user_id] = response.room_id
        return str(response.room_id)

    @contextlib.asynccontextmanager
    async def _typing(self, room_id: str) -> AsyncIterator[None]:
        """Show the bot as typing until the block is done."""
        task = asyncio.create_task(self._keep_typing(room_id), name=f"typing:{room_id}")
        try:
            yield
        finally:
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    raise
            await self._set_typing(room_id, False)

    async def _keep_typing(self, room_id: str) -> None:
        while True:
            await self._set_typing(room_id, True)
            await asyncio.sleep(TYPING_EVERY)

    async def _set_typing(self, room_id: str, typing: bool) -> None:
        assert self.client is not None
        response = await self.client.room_typing(room_id, typing_state=typing, timeout=int(TYPING_EVERY * 1500))
        if isinstance(response, ErrorResponse):
            log.warning("typing notice in %s failed: %s", room_id, _failure(response))
