"""The Matrix sync loop: record each sync's events in the inbox, save the sync token, then answer them.

What is new is decided by the sync token alone: each sync's events are recorded in the inbox, then the token is
saved, then the events are answered and marked handled, so a restart neither loses nor repeats a message,
whatever the host clock says. Events recorded but not answered (the last run stopped, crashed, or a sync failed
half-way) are answered first; encrypted events waiting for their key come next, since a sync may bring it.

The answers run beside the sync loop, one room's events one after another: the next sync does not wait for a slow
model in one room, so a crisis message in another room gets its help text at once (issue 51).
"""
from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
from collections.abc import Awaitable, Callable, Sequence

from nio import AsyncClient, ErrorResponse, SyncResponse

from bot.channels.matrix.choices import Reactions
from bot.channels.matrix.keys import WaitingForKeys
from bot.channels.matrix.messages import failure
from bot.channels.matrix.outgoing import Outgoing
from bot.channels.matrix.rooms import CHANNEL, Received, Rooms, from_inbox, inbox_payload
from bot.channels.matrix.session import Session
from bot.channels.sending import stop_task
from bot.errors import MatrixError
from memory import MATRIX_SYNC, Inbox, Leases

log = logging.getLogger(__name__)

SYNC_TIMEOUT_MS = 30_000
STOP_GRACE = 10.0  # seconds stop() waits for the events in hand to be answered
# Several workers: one syncs at a time. The lease outlasts a long poll and the answers to one sync; the others ask
# again after a pause (an event recorded twice is still answered once: the inbox knows its id).
SYNC_LEASE_SECONDS = 120.0
FOLLOWER_PAUSE = 15.0

Handle = Callable[[Received], Awaitable[bool]]  # answer one event; False while it waits for its key
Gate = Callable[[], Awaitable[bool]]  # whether this worker may sync now


def sync_lease(leases: Leases, worker: str, clock: Callable[[], float]) -> Gate:
    """A gate that lets this worker sync while it holds the lease `matrix-sync` (asking renews it)."""
    async def holds() -> bool:
        return await leases.take(MATRIX_SYNC, worker, clock(), SYNC_LEASE_SECONDS)
    return holds


class Syncing:
    """Syncs until stopped and hands each new event to `handle`, one room's in order, rooms side by side."""

    def __init__(self, client: AsyncClient, session: Session, inbox: Inbox, rooms: Rooms, reactions: Reactions,
                 keys: WaitingForKeys, out: Outgoing, handle: Handle, clock: Callable[[], float],
                 timeline_limit: int, gate: Gate | None = None) -> None:
        self.client = client
        self.gate = gate  # None: the only worker, always syncing
        self._first_pending = False  # the first sync waits until this worker may sync
        self.session = session
        self.inbox = inbox
        self.rooms = rooms
        self.reactions = reactions
        self.keys = keys
        self.out = out
        self.handle = handle
        self.clock = clock
        self.timeline_limit = timeline_limit
        self._task: asyncio.Task[None] | None = None
        self._synced = asyncio.Event()
        self._warned_encrypted: set[str] = set()  # rooms already named in the log as unreadable
        self._recover = True  # load what the inbox holds unanswered before the next sync (at start, after a failure)
        self._token: str | None = None
        self._idle = asyncio.Event()  # set while no sync's events are being recorded
        self._idle.set()
        self._stopping = False
        self._chains: dict[str, asyncio.Task[None]] = {}  # per room: its events in hand, answered one after another
        self._in_flight: set[str] = set()  # events handed to a chain and not answered yet (never handed twice)

    async def first(self) -> None:
        """The first sync of a start: answered when a token was saved, only recorded on a first start ever.

        While another worker syncs, it waits for the sync loop (which asks again until this one may).
        """
        waited = self._first_pending
        if not await self.may_sync():
            if not waited:
                log.info("another worker syncs with the Matrix homeserver; this one waits for its turn")
            return
        self._first_pending = False
        self._token = self.session.load_token()
        await self.sync_and_handle(first=True, answer=self._token is not None)

    def start(self) -> None:
        """Sync on in the background."""
        self._task = asyncio.create_task(self._run(), name="matrix-sync")

    async def stop(self) -> None:
        """Let the events in hand be answered (for a while), then stop syncing."""
        self._stopping = True
        deadline = asyncio.get_running_loop().time() + STOP_GRACE
        try:
            await asyncio.wait_for(self._idle.wait(), STOP_GRACE)
            chains = list(self._chains.values())
            if chains:
                left = max(0.0, deadline - asyncio.get_running_loop().time())
                _, pending = await asyncio.wait(chains, timeout=left)
                if pending:
                    raise TimeoutError
        except TimeoutError:
            log.warning("stopping while still answering; the inbox keeps the rest for the next start")
        if self._task is not None:
            await stop_task(self._task)
            self._task = None
        for chain in list(self._chains.values()):
            await stop_task(chain)
        self._chains.clear()

    async def next_sync(self) -> None:
        """Wait until the next sync was answered (at most one long poll)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._synced.wait(), SYNC_TIMEOUT_MS / 1000)

    async def _run(self) -> None:
        """Sync until cancelled; a failing sync is logged and retried with growing pauses."""
        failures = 0
        while not self._stopping:
            try:
                if self._first_pending:
                    await self.first()
                elif await self.may_sync():
                    await self.sync_and_handle(first=False, answer=True)
                if self._first_pending:
                    await asyncio.sleep(FOLLOWER_PAUSE)
                failures = 0
            except Exception as exc:  # the loop must outlive any one failure; each is logged
                failures, self._recover = failures + 1, True
                pause = min(60, 2 ** failures)
                log.warning("matrix sync failed (%d in a row), next try in %d s: %s", failures, pause, exc,
                            exc_info=failures == 1)
                await asyncio.sleep(pause)

    async def may_sync(self) -> bool:
        """Whether this worker syncs now (the only one always does); when not, the loop waits for its turn."""
        if self.gate is None or await self.gate():
            return True
        self._first_pending = True  # when the turn comes, it starts like a start: what the inbox holds first
        self._recover = True
        return False

    async def sync_and_handle(self, first: bool, answer: bool) -> None:
        """One sync: answer invites, record the new events, save the token, then answer and mark them handled.

        Events recorded earlier but not answered are answered first; they are read before this sync's events
        are recorded, so none comes twice. Encrypted events waiting for their key come next.
        """
        client, since = self.client, self._token
        leftovers = await self._leftovers() if self._recover else []
        self._recover = False
        limit = self.timeline_limit if since else 1
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
                    events = await self.rooms.missed(room_id, info.timeline, since, self.timeline_limit)
                    received += await self.rooms.received(room_id, events, self.reactions.concerns)
            elif response.rooms.join:
                log.info("first start: the history of %d rooms is not answered", len(response.rooms.join))
            now = self.clock()
            sent = {r.event.event_id: r.event.server_timestamp for r in received}  # ties: the timeline's order
            new = set(await self.inbox.record(CHANNEL, [(r.event.event_id, inbox_payload(r)) for r in received], now,
                                              sent_order=sent))
            received = [dataclasses.replace(r, received_at=now) for r in received if r.event.event_id in new]
            self.session.save_token(response.next_batch)
            self._token = response.next_batch
            self.warn_unreadable_rooms()
            await self._answer([*leftovers, *self.keys.items(), *received])  # the waiting ones as they are now
            await self.rooms.greet()
        finally:
            self._idle.set()
        self._synced.set()
        self._synced = asyncio.Event()

    async def _leftovers(self) -> list[Received]:
        """The events recorded but not answered when mnemo last stopped (or crashed, or a sync failed).

        They include the encrypted events still waiting for their key, which are tried again with them.
        """
        found = []
        self.keys.clear()
        for entry in await self.inbox.unhandled(CHANNEL):
            item = from_inbox(entry.payload or "null")
            if item is None:  # a kind of event no longer answered
                await self.inbox.done(CHANNEL, entry.event_id, self.clock())
            else:
                found.append(dataclasses.replace(item, received_at=entry.received_at))
        if found:
            log.warning("answering %d Matrix events recorded but not answered before", len(found))
        return found

    async def _answer(self, items: Sequence[Received]) -> None:
        """Hand events to their rooms' chains: one room's answered one after another, after those in hand, different
        rooms at the same time; the sync loop goes on meanwhile. An event in hand already is not handed again."""
        by_room: dict[str, list[Received]] = {}
        for item in items:
            if item.event.event_id not in self._in_flight:
                self._in_flight.add(item.event.event_id)
                by_room.setdefault(item.room_id, []).append(item)
        for room_id, room_items in by_room.items():
            chain = asyncio.create_task(self._answer_room(self._chains.get(room_id), room_items),
                                        name=f"matrix-answers {room_id}")
            self._chains[room_id] = chain
            chain.add_done_callback(functools.partial(self._chain_done, room_id))

    async def _answer_room(self, before: asyncio.Task[None] | None, items: Sequence[Received]) -> None:
        """Answer a room's events in order, once the room's events handed before are answered."""
        if before is not None:
            await asyncio.wait({before})
        for item in items:
            try:
                if await self.handle(item):
                    await self.inbox.done(CHANNEL, item.event.event_id, self.clock())
            except Exception:  # the inbox keeps it: the next sync answers it again, as after a failed sync
                self._recover = True
                log.exception("matrix event %s in %s could not be answered; tried again after the next sync",
                              item.event.event_id, item.room_id)
            finally:
                self._in_flight.discard(item.event.event_id)

    def _chain_done(self, room_id: str, chain: asyncio.Task[None]) -> None:
        """Forget a room's chain once it is done (unless a later one took its place)."""
        if self._chains.get(room_id) is chain:
            del self._chains[room_id]

    async def _keep_keys(self) -> None:
        """The encryption chores of a sync: send queued to-device messages, upload, query and claim keys."""
        client = self.client
        if client.olm is None:
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

    def warn_unreadable_rooms(self) -> None:
        """Say once per room when it is encrypted but this process cannot decrypt."""
        if self.client.olm is not None:
            return
        for room in self.client.rooms.values():
            if room.encrypted and room.room_id not in self._warned_encrypted:
                self._warned_encrypted.add(room.room_id)
                log.warning("room %s is encrypted, but end-to-end encryption is off (it needs matrix-nio[e2e]); "
                            "mnemo cannot read or answer messages there", room.room_id)
