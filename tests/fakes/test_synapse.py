"""Prove a matrix-nio client can talk (plain and E2E) through the real Synapse fake."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from nio import (
    AsyncClient,
    AsyncClientConfig,
    JoinResponse,
    LoginResponse,
    MegolmEvent,
    RoomCreateResponse,
    RoomMessageText,
    RoomSendResponse,
    SyncResponse,
)

from tests.fakes.synapse import Synapse

PASSWORD = "correct horse battery staple"


async def _login(
    syn: Synapse, localpart: str, store: Path | None = None
) -> AsyncClient:
    """Register a user and return a logged-in nio client (E2E if a store is given)."""
    user_id, _, _ = await syn.register(localpart, PASSWORD)
    if store is None:
        client = AsyncClient(syn.url, user_id)
    else:
        store.mkdir(parents=True, exist_ok=True)
        config = AsyncClientConfig(encryption_enabled=True, store_sync_tokens=True)
        client = AsyncClient(syn.url, user_id, store_path=str(store), config=config)
    resp = await client.login(PASSWORD, device_name=f"{localpart}-test")
    assert isinstance(resp, LoginResponse), resp
    return client


async def _sync_until(
    client: AsyncClient, room_id: str, match: Callable[[object], bool], tries: int = 10
) -> object:
    """Sync repeatedly until an event in room_id satisfies match; return that event."""
    seen: list[object] = []
    for _ in range(tries):
        resp = await client.sync(timeout=1000, full_state=client.next_batch is None)
        assert isinstance(resp, SyncResponse), resp
        room = resp.rooms.join.get(room_id)
        for event in room.timeline.events if room else []:
            seen.append(event)
            if match(event):
                return event
    raise AssertionError(f"no matching event in {room_id}; saw {seen!r}")


@pytest.mark.asyncio
async def test_direct_room_plain_text(tmp_path: Path) -> None:
    """Anna DMs the bot in an unencrypted room and the bot receives the text."""
    async with Synapse(tmp_path / "hs") as syn:
        print(f"\nsynapse startup: {syn.startup_seconds:.2f}s")
        assert (
            syn.url.startswith("http://127.0.0.1:") and syn.server_name == "localhost"
        )
        anna = await _login(syn, "anna")
        bot = await _login(syn, "bot")
        try:
            created = await anna.room_create(is_direct=True, invite=[bot.user_id])
            assert isinstance(created, RoomCreateResponse), created
            assert isinstance(await bot.join(created.room_id), JoinResponse)
            sent = await anna.room_send(
                created.room_id,
                "m.room.message",
                {"msgtype": "m.text", "body": "hello bot"},
            )
            assert isinstance(sent, RoomSendResponse), sent
            event = await _sync_until(
                bot,
                created.room_id,
                lambda e: isinstance(e, RoomMessageText) and e.body == "hello bot",
            )
            assert isinstance(event, RoomMessageText) and event.sender == anna.user_id
        finally:
            await anna.close()
            await bot.close()


@pytest.mark.asyncio
async def test_encrypted_room_decrypts(tmp_path: Path) -> None:
    """Anna sends a Megolm-encrypted message and the bot's nio store decrypts it."""
    async with Synapse(tmp_path / "hs") as syn:
        anna = await _login(syn, "anna", tmp_path / "anna-store")
        bot = await _login(syn, "bot", tmp_path / "bot-store")
        try:
            for client in (anna, bot):
                if client.should_upload_keys:
                    await client.keys_upload()
            encryption = {
                "type": "m.room.encryption",
                "state_key": "",
                "content": {"algorithm": "m.megolm.v1.aes-sha2"},
            }
            created = await anna.room_create(
                is_direct=True, invite=[bot.user_id], initial_state=[encryption]
            )
            assert isinstance(created, RoomCreateResponse), created
            assert isinstance(await bot.join(created.room_id), JoinResponse)
            # Anna must see the bot's membership and device keys before sharing keys.
            await anna.sync(timeout=1000, full_state=True)
            assert anna.rooms[created.room_id].encrypted
            if anna.should_query_keys:
                await anna.keys_query()
            assert bot.device_id in anna.device_store[bot.user_id]
            t0 = time.monotonic()
            sent = await anna.room_send(
                created.room_id,
                "m.room.message",
                {"msgtype": "m.text", "body": "secret hello"},
                ignore_unverified_devices=True,
            )
            assert isinstance(sent, RoomSendResponse), sent
            event = await _sync_until(
                bot,
                created.room_id,
                lambda e: isinstance(e, (RoomMessageText, MegolmEvent)),
            )
            print(f"\nencrypted round trip: {time.monotonic() - t0:.2f}s")
            assert isinstance(event, RoomMessageText), f"not decrypted: {event!r}"
            assert (
                event.body == "secret hello"
                and event.decrypted
                and event.sender == anna.user_id
            )
        finally:
            await anna.close()
            await bot.close()
