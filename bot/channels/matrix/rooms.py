"""Which Matrix rooms mnemo is in, and whose each event there is.

Direct rooms (the bot and one person) belong to that person: an allowed user's are answered, an
unknown user's get a pairing code. A room of several people is answered only when it is on
MNEMO_MATRIX_ALLOWED_ROOMS, and there only what mentions or replies to mnemo (and reactions on its messages, or their
redactions), in the room's own memory.
When mnemo speaks first, it writes in the direct room the person last wrote in (or any other; or a new one).

Invites: mnemo joins when an allowed user or an allowed room invites it. When an unknown user invites
it to a direct room (and unknown users are paired), it joins only to send the pairing code and stays,
so the conversation can start there once the code is approved (it leaves again at once when their code
is already waiting in another room, or when too many requests are open); any other invite is declined.

An encrypted event whose key has not reached the bot yet is recorded in the inbox as it came (still
encrypted) and kept there until it can be read or is given up; in an allowed room it is taken in before
its mention can be seen, and checked again once decrypted.
"""
from __future__ import annotations

import functools
import json
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import aiohttp
from nio import (
    AsyncClient,
    EncryptionError,
    ErrorResponse,
    Event,
    InviteMemberEvent,
    MatrixRoom,
    MegolmEvent,
    ProfileGetDisplayNameResponse,
    ReactionEvent,
    RedactionEvent,
    RoomCreateResponse,
    RoomEncryptedImage,
    RoomEncryptedMedia,
    RoomGetEventResponse,
    RoomMessageEmote,
    RoomMessageImage,
    RoomMessageMedia,
    RoomMessagesResponse,
    RoomMessageText,
    RoomPreset,
    RoomResolveAliasResponse,
    Timeline,
)

from bot.channels.access import Access
from bot.channels.matrix.images import media_in_the_clear
from bot.channels.matrix.messages import (
    dm_partner,
    failure,
    fresh_events,
    is_edit,
    localpart,
    media_of,
    mentions,
    replied_to,
)
from bot.channels.matrix.outgoing import Outgoing
from bot.commands.catalog import BY_NAME, parse_command
from bot.errors import MatrixError
from memory import group_scope

log = logging.getLogger(__name__)

CHANNEL = "matrix"
GAP_LIMIT = 500  # events fetched per room to fill a gap after a long downtime
ANSWERED = (RoomMessageText, RoomMessageEmote, ReactionEvent, RedactionEvent, RoomMessageMedia, RoomEncryptedMedia)
ENCRYPTED = "m.room.encrypted"
ENCRYPTION_STATE = {"type": "m.room.encryption", "state_key": "", "content": {"algorithm": "m.megolm.v1.aes-sha2"}}
# (event id, room id) -> whether a reaction on that event, or a redaction of it, is mnemo's business: options are
# open under it, it is a message of the companion's, or a reaction kept as feedback
Concerns = Callable[[str, str], Awaitable[bool]]


@dataclass(frozen=True)
class Route:
    """Whose an event is: an allowed user's direct room, an unknown user's, or an allowed group room."""

    kind: Literal["private", "stranger", "group"]
    scope: str  # the engine's user id: the Matrix id, or 'mx:group:<room id>'


@dataclass(frozen=True)
class Received:
    """An event to answer: its room, whose it is, whether an earlier run left it over, and when it came."""

    room_id: str
    event: Event
    route: Route
    replayed: bool = False
    received_at: float | None = None  # when the inbox recorded it (by the channel's clock)


def inbox_payload(item: Received) -> str | None:
    """What the inbox keeps of an event until it is answered: nothing of an unknown user.

    An event that could not be decrypted yet is kept as it came, encrypted, to be read once its key arrives.
    """
    if item.route.kind == "stranger":
        return None
    return json.dumps({"room_id": item.room_id, "kind": item.route.kind, "scope": item.route.scope,
                       "event": item.event.source}, ensure_ascii=False)


def from_inbox(payload: str) -> Received | None:
    """An event left unanswered by an earlier run, as it was recorded (None for a kind no longer answered)."""
    data = json.loads(payload)
    if not isinstance(data, dict):
        return None
    source = data["event"]
    if source.get("type") == ENCRYPTED:
        event = Event.parse_event({**source, "room_id": data["room_id"]})  # decryption needs the room
    else:
        event = media_in_the_clear(Event.parse_decrypted_event(source))
    if not isinstance(event, (*ANSWERED, MegolmEvent)):
        return None
    return Received(data["room_id"], event, Route(data["kind"], data["scope"]), replayed=True)


def still_encrypted(payloads: Iterable[str | None]) -> int:
    """How many of these inbox payloads are events that wait for their key (for `mnemo doctor`)."""
    count = 0
    for payload in payloads:
        data = json.loads(payload) if payload else None
        if isinstance(data, dict) and isinstance(data.get("event"), dict) and data["event"].get("type") == ENCRYPTED:
            count += 1
    return count


@dataclass(frozen=True)
class Greeting:
    """The pairing answer for an unknown user who invited mnemo, sent once the joined room is synced."""

    user_id: str
    text: str


class Rooms:
    """Joins, declines and leaves rooms, and tells whose an event is."""

    def __init__(self, client: AsyncClient, me: str, out: Outgoing, access: Access, allowed_rooms: frozenset[str],
                 clock: Callable[[], float]) -> None:
        self.client = client
        self.me = me
        self.out = out
        self.access = access
        self.clock = clock
        self.allowed: set[str] = set()  # room ids; aliases are resolved at start and again on invites
        self._unresolved = {name for name in allowed_rooms if name.startswith("#")}
        self.allowed.update(name for name in allowed_rooms if not name.startswith("#"))
        self._greetings: dict[str, Greeting] = {}  # room id -> what to send once the room is synced
        self._last_room: dict[str, str] = {}  # user id -> the direct room they last wrote in
        self.companion_names: tuple[str, ...] = ()  # the companion's names, which count as a mention too
        self._warned: set[str] = set()  # rooms already named in the log as ignored

    async def resolve(self) -> None:
        """Turn the allowed rooms' aliases into room ids; one that does not resolve yet is tried again later."""
        for alias in sorted(self._unresolved):
            response = await self.client.room_resolve_alias(alias)
            if isinstance(response, RoomResolveAliasResponse):
                self.allowed.add(response.room_id)
                self._unresolved.discard(alias)
            else:
                log.warning("MNEMO_MATRIX_ALLOWED_ROOMS: %s does not resolve (yet): %s", alias, failure(response))

    # --- whose an event is ------------------------------------------------------------------------

    async def missed(self, room_id: str, timeline: Timeline, since: str | None, limit: int) -> list[Event]:
        """A room's new events; when the sync left a gap (more than `limit` events), the missing ones first."""
        events = list(timeline.events)
        if not (timeline.limited and since and timeline.prev_batch) or fresh_events(events, self.me) != events:
            return events  # no gap, or the bot joined in this batch: what came before is history
        client, start = self.client, timeline.prev_batch
        older: list[Event] = []
        while len(older) < GAP_LIMIT:
            page = await self.out.patiently(
                functools.partial(client.room_messages, room_id, start=start, end=since, limit=100), "history")
            if not isinstance(page, RoomMessagesResponse):
                log.warning("could not fetch the messages in %s sent while mnemo was away: %s", room_id, failure(page))
                break
            older += page.chunk
            if not page.chunk or not page.end or page.end == start:
                break
            start = page.end
        else:
            log.warning("more than %d events in %s while mnemo was away; older ones are not answered",
                        GAP_LIMIT, room_id)
        log.info("fetched %d events in %s that the sync left out (more than %d)", len(older), room_id, limit)
        return list(reversed(older)) + events

    async def received(self, room_id: str, events: Sequence[Event], concerns: Concerns) -> list[Received]:
        """The events of a room that mnemo answers, each with whose it is (history before the bot joined is not)."""
        room = self.client.rooms.get(room_id)
        if room is None:
            return []
        found = []
        for event in map(media_in_the_clear, fresh_events(events, self.me)):
            if event.sender == self.me or not isinstance(event, (*ANSWERED, MegolmEvent)):
                continue
            route = await self.route(room, event, concerns)
            if route is not None:
                found.append(Received(room_id, event, route))
        return found

    async def route(self, room: MatrixRoom, event: Event, concerns: Concerns) -> Route | None:
        """Whose an event is, or None when mnemo leaves it alone.

        `concerns` tells whether a reaction on an event of a room, or its redaction, is mnemo's business (in rooms).
        """
        if room.room_id in self.allowed:
            return await self._group_route(room, event, concerns)
        if dm_partner(room, self.me) != event.sender:
            if room.room_id not in self._warned:
                self._warned.add(room.room_id)
                log.warning("ignoring room %s (%s): not a direct room and not on MNEMO_MATRIX_ALLOWED_ROOMS",
                            room.room_id, room.display_name)
            return None
        if await self.access.allows(event.sender):
            return Route("private", event.sender)
        text = isinstance(event, (RoomMessageText, RoomMessageEmote)) and not is_edit(event.source.get("content", {}))
        return Route("stranger", event.sender) if text else None

    async def _group_route(self, room: MatrixRoom, event: Event, concerns: Concerns) -> Route | None:
        """In an allowed room: a message (or a picture) that mentions or replies to mnemo, a reaction on its open
        question or on one of its messages, the redaction of a reaction kept.

        An event not decrypted yet is taken in too: whether it mentions mnemo is seen once it can be read.
        """
        scope = group_scope("mx", room.room_id)
        if isinstance(event, ReactionEvent):
            return Route("group", scope) if await concerns(event.reacts_to, room.room_id) else None
        if isinstance(event, RedactionEvent):
            return Route("group", scope) if event.redacts and await concerns(event.redacts, room.room_id) else None
        if isinstance(event, MegolmEvent):
            return Route("group", scope)
        if not isinstance(event, (RoomMessageText, RoomMessageEmote, RoomMessageImage, RoomEncryptedImage)) and (
                media_of(event) is None):
            return None  # a picture, a voice note or a document counts when its caption names or replies to mnemo
        content = event.source.get("content", {})
        if is_edit(content):
            return None
        if mentions(content, self.me, self.names(room)) or own_command(event, content) or (
                await self._replies_to_me(room.room_id, content)):
            return Route("group", scope)
        return None

    async def _replies_to_me(self, room_id: str, content: dict[str, Any]) -> bool:
        """Whether a message replies to one of the bot's messages (asking the homeserver when not sent lately); in a
        thread, a message that follows one of the bot's counts too (its fallback reply names it)."""
        target = replied_to(content, falling_back=True)
        if target is None:
            return False
        if self.out.is_mine(target):
            return True
        found = await self.event(room_id, target)
        return found is not None and found.sender == self.me

    async def event(self, room_id: str, event_id: str) -> Event | None:
        """An earlier event of a room, asked of the homeserver (decrypted where it can be, else still encrypted);
        None when it is not to be had (gone, not visible to mnemo, the homeserver unreachable)."""
        try:
            response = await self.client.room_get_event(room_id, event_id)
        except (TimeoutError, aiohttp.ClientError) as exc:
            log.info("could not fetch event %s in %s: %s", event_id, room_id, exc or type(exc).__name__)
            return None
        if not isinstance(response, RoomGetEventResponse):
            log.info("could not fetch event %s in %s: %s", event_id, room_id, failure(response))
            return None
        event = response.event
        if isinstance(event, MegolmEvent) and self.client.olm is not None:
            event.room_id = event.room_id or room_id  # decryption needs the room
            try:
                return media_in_the_clear(self.client.decrypt_event(event))
            except EncryptionError:
                return event  # its sender is still known
        return event

    def names(self, room: MatrixRoom) -> list[str]:
        """The bot's names in a room, as people would mention it: display name, localpart, the companion's name."""
        user = room.users.get(self.me)
        return [n for n in (user.display_name if user else None, localpart(self.me), *self.companion_names) if n]

    def sender_name(self, room: MatrixRoom, user_id: str) -> str:
        """How a member is called in a room: display name, else localpart."""
        user = room.users.get(user_id)
        return (user.display_name if user else None) or localpart(user_id)

    # --- direct rooms -------------------------------------------------------------------------------

    def wrote_in(self, user_id: str, room_id: str) -> None:
        """Note the direct room a person last wrote in (mnemo writes to them there first)."""
        self._last_room[user_id] = room_id

    async def direct_room(self, user_id: str, next_sync: Callable[[], Awaitable[None]]) -> str:
        """The user's direct room: the one they last wrote in, any other one, or a new one (there after `next_sync`)."""
        known = self._last_room.get(user_id)
        if known and dm_partner(self.client.rooms.get(known), self.me) == user_id:
            return known
        rooms = [r for r in self.client.rooms.values() if dm_partner(r, self.me) == user_id]
        rooms.sort(key=lambda r: user_id in r.invited_users)  # rooms the user has joined first
        if rooms:
            self._last_room[user_id] = rooms[0].room_id
            return str(rooms[0].room_id)
        return await self._create_room(user_id, next_sync)

    async def _create_room(self, user_id: str, next_sync: Callable[[], Awaitable[None]]) -> str:
        """Create a direct room with the user (encrypted when this process can) and wait until it is synced."""
        client = self.client
        response = await self.out.patiently(lambda: client.room_create(
            is_direct=True, invite=[user_id], preset=RoomPreset.trusted_private_chat,
            initial_state=[ENCRYPTION_STATE] if client.olm is not None else []), "creating a room")
        if not isinstance(response, RoomCreateResponse):
            raise MatrixError(f"could not create a direct room with {user_id}: {failure(response)}")
        for _ in range(3):  # the sync loop brings the new room in with its next answer
            if dm_partner(client.rooms.get(response.room_id), self.me) == user_id:
                break
            await next_sync()
        else:
            raise MatrixError(f"the new room {response.room_id} with {user_id} did not arrive in a sync")
        log.info("created direct room %s with %s", response.room_id, user_id)
        self._last_room[user_id] = response.room_id
        return str(response.room_id)

    # --- invites ------------------------------------------------------------------------------------

    async def on_invite(self, room_id: str, events: Sequence[Event]) -> None:
        """Join an allowed user's or an allowed room's invite; answer an unknown user's direct invite with a code."""
        invite = next((e for e in events if isinstance(e, InviteMemberEvent)
                       and e.state_key == self.me and e.membership == "invite"), None)
        inviter = invite.sender if invite is not None else "?"
        if self._unresolved:
            await self.resolve()
        if room_id in self.allowed or await self.access.allows(inviter):
            await self.join(room_id, inviter)
            return
        direct = invite is not None and bool(invite.content.get("is_direct"))
        mode = self.access.config.unknown_users
        if not direct or mode != "pair":
            why = "not a direct invite" if not direct else f"MNEMO_UNKNOWN_USERS={mode}"
            log.warning("declined the invite to %s from %s (not allowed; %s)", room_id, inviter, why)
            await self.leave(room_id)
            return
        if not await self.join(room_id, inviter):
            return
        answer = await self.access.turn_away(CHANNEL, inviter, await self.display_name(inviter, events))
        if answer is None:
            log.warning("left %s again: a pairing code is already waiting for %s elsewhere", room_id, inviter)
            await self.leave(room_id)
            return
        self._greetings[room_id] = Greeting(inviter, answer)

    async def greet(self) -> None:
        """Send unknown users their pairing answer in the rooms joined for it, once those rooms are synced.

        A room is left again when no code is waiting there (the answer was a refusal: too many requests).
        """
        for room_id, greeting in list(self._greetings.items()):
            if room_id not in self.client.rooms:
                continue
            del self._greetings[room_id]
            try:
                await self.out.text(room_id, greeting.text)
            except MatrixError as exc:
                log.warning("could not send the pairing answer to %s: %s", room_id, exc)
            waiting = await self.access.store.pending(self.clock())
            if not any(r.user_id == greeting.user_id and r.channel == CHANNEL for r in waiting):
                await self.leave(room_id)

    async def join(self, room_id: str, inviter: str) -> bool:
        """Join a room; False (logged) when that failed."""
        client = self.client
        response = await self.out.patiently(lambda: client.join(room_id), "join")
        if isinstance(response, ErrorResponse):
            log.warning("could not join %s on %s's invite: %s", room_id, inviter, failure(response))
            return False
        log.info("joined %s on %s's invite", room_id, inviter)
        return True

    async def leave(self, room_id: str) -> None:
        """Leave a room or decline its invite (a failure is logged)."""
        client = self.client
        response = await self.out.patiently(lambda: client.room_leave(room_id), "leave")
        if isinstance(response, ErrorResponse):
            log.warning("could not leave %s: %s", room_id, failure(response))

    async def display_name(self, user_id: str, events: Sequence[Event] = ()) -> str:
        """A user's display name: from the invite, else from their profile, else their localpart."""
        for event in events:
            if isinstance(event, InviteMemberEvent) and event.state_key == user_id and event.content.get("displayname"):
                return str(event.content["displayname"])
        response = await self.client.get_displayname(user_id)
        if isinstance(response, ProfileGetDisplayNameResponse) and response.displayname:
            return response.displayname
        return localpart(user_id)


def own_command(event: Event, content: dict[str, Any]) -> bool:
    """A bare '!memories' of mnemo's own in a room: a command needs no mention (a member who is no admin is told
    nothing, as with a mention)."""
    parsed = parse_command(str(content.get("body") or "")) if isinstance(event, RoomMessageText) else None
    return parsed is not None and parsed[0] in BY_NAME
