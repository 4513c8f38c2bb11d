"""The Matrix crypto store on a real Synapse: private files sealed with mnemo's own pickle key, and a store lost while
the login stays: detected at the start, a new device logged in (or, with an access token, a start that stops and says
what to do), /healthz and `mnemo doctor` saying so, and the person never asked to write again for mnemo's fault."""
from __future__ import annotations

import json
import stat
from pathlib import Path

import aiohttp
import pytest
from nio import AsyncClient, RoomMessageText

from bot.admin import ops
from bot.channels.matrix.crypto_store import local_identity
from bot.channels.matrix.device_keys import NIO_DEFAULT_KEY, CryptoHealth, pickle_key, verdict
from bot.errors import ConfigError
from bot.texts import t
from bot.web_page.health import Running, health
from tests import test_matrix_polish as polish
from tests.test_matrix import PASSWORD, Human, running
from tests.test_matrix_polish import Bot

ON_ONE_SYNAPSE = pytest.mark.asyncio(loop_scope="module")  # one homeserver for the whole module
syn, store, bot = polish.syn, polish.store, polish.bot  # the same fixtures: a Synapse for this module


# --- pure parts -------------------------------------------------------------------------------------


def test_the_keys_are_lost_when_the_homeserver_knows_others_than_the_store_holds() -> None:
    assert verdict(None, None) == "ok"  # a new device: nothing published yet
    assert verdict("abc", None) == "ok"  # keys made, not uploaded yet
    assert verdict("abc", "abc") == "ok"
    assert verdict(None, "abc") == "lost"  # the store is gone
    assert verdict("xyz", "abc") == "lost"  # nio made a new account under the same device id


def test_the_pickle_key_is_the_setting_or_a_private_secret_made_once(tmp_path: Path) -> None:
    assert pickle_key(tmp_path / "a", "from-the-settings") == "from-the-settings"
    assert pickle_key(tmp_path / "b", None, create=False) == NIO_DEFAULT_KEY  # an older mnemo's store: nio's default
    made = pickle_key(tmp_path / "b", None)
    assert made != NIO_DEFAULT_KEY and len(made) >= 40 and pickle_key(tmp_path / "b", None) == made
    assert stat.S_IMODE((tmp_path / "b" / "pickle_key").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "b").stat().st_mode) == 0o700


def test_health_says_what_is_wrong_with_the_crypto() -> None:
    crypto = CryptoHealth()
    assert crypto.report(None) == {"ok": True, "undecryptable_since_start": 0}
    crypto.replaced_by("OLD", "NEW", 100.0)
    crypto.undecryptable, crypto.ours = 2, 1
    report = crypto.report(None)
    assert report["ok"] is False and report["undecryptable_since_start"] == 2
    assert report["device_replaced"] == {"lost": "OLD", "now": "NEW"}
    assert "2 encrypted messages could not be decrypted" in report["problem"]


# --- helpers ------------------------------------------------------------------------------------------


def private(folder: Path) -> list[str]:
    """The files and folders in `folder` (itself too) that anyone but their owner may read or enter."""
    loose = [p for p in [folder, *folder.rglob("*")] if stat.S_IMODE(p.stat().st_mode) & 0o077]
    return [p.name for p in loose]


def lose_store(folder: Path, bot_id: str) -> list[Path]:
    """Delete the crypto store's files, as a lost volume or a careless backup restore does; the session stays."""
    lost = [p for p in folder.glob(f"{bot_id}_*") if p.is_file()]
    for path in lost:
        path.unlink()
    return lost


async def whoami_status(url: str, token: str) -> int:
    async with aiohttp.ClientSession() as http, http.get(f"{url}/_matrix/client/v3/account/whoami",
                                                         headers={"Authorization": f"Bearer {token}"}) as resp:
        return resp.status


async def encrypted_say(person: Human, room: str, text: str) -> str:
    """Send as a client does that learns the bot's devices before it encrypts (Element queries keys on a change)."""
    if person.client.should_query_keys:
        await person.client.keys_query()
    return await person.say(room, text)


async def doctor(bot: Bot) -> dict[str, tuple[bool, str]]:
    settings = bot.settings.model_copy(update={"embedding_model": "tests.fakes.embedder:FakeEmbedder"})
    return {c.name: (c.ok, c.detail) for c in await ops.doctor(settings, check_model=False)}


# --- the real thing -----------------------------------------------------------------------------------


@ON_ONE_SYNAPSE
async def test_a_lost_store_means_a_new_device_and_the_person_is_not_asked_to_write_again(bot: Bot) -> None:
    anna = await bot.person("Anna", store=True)
    folder = bot.settings.data_dir / "matrix"
    async with running(bot.channel(allowed_users=frozenset({anna.user_id}))) as channel:
        assert channel.client is not None and channel.client.olm is not None
        old_device = str(channel.client.device_id)
        room = await anna.open_dm(bot.bot_id, encrypted=True)
        await anna.wait_for(room, bot.joined)
        bot.chat.enqueue("Hallo Anna.")
        await encrypted_say(anna, room, "Hallo")
        [reply] = await anna.wait_for(room, bot.said)
        assert isinstance(reply, RoomMessageText) and reply.decrypted and reply.body == "Hallo Anna."
        assert channel.crypto_report()["ok"] is True
    # Private, also what nio made while it ran (the store, its journal, the trusted devices), and sealed with a key of
    # mnemo's own: nio's default key does not open it.
    assert (folder / f"{bot.bot_id}_{old_device}.db").exists() and private(folder) == []
    key = (folder / "pickle_key").read_text()
    assert local_identity(folder, bot.bot_id, old_device, key) is not None
    assert local_identity(folder, bot.bot_id, old_device, NIO_DEFAULT_KEY) is None
    old_token = json.loads((folder / "session.json").read_text())["access_token"]

    assert lose_store(folder, bot.bot_id)
    assert (await doctor(bot))["matrix crypto"][0] is False  # before the start: the doctor sees it
    sent_while_down = await encrypted_say(anna, room, "Bist du da?")  # encrypted for the device whose keys are gone
    bot.chat.enqueue("Jetzt lese ich dich wieder.")
    async with running(bot.channel(allowed_users=frozenset({anna.user_id}))) as channel:
        assert channel.client is not None and channel.client.olm is not None
        new_device = str(channel.client.device_id)
        assert new_device != old_device
        assert await whoami_status(bot.syn.url, old_token) == 401  # the old device was logged out
        told = await anna.wait_for(room, bot.said)
        assert [getattr(e, "body", "") for e in told] == [t("de", "matrix_undecryptable_ours")]
        assert told[0].source["content"]["m.relates_to"]["m.in_reply_to"]["event_id"] == sent_while_down
        assert "noch einmal" not in t("de", "matrix_undecryptable_ours")

        report = channel.crypto_report()
        assert report["ok"] is False and report["undecryptable_since_start"] == 1
        assert report["device_replaced"] == {"lost": old_device, "now": new_device}
        status, body = await health(Running(bot.store, crypto=channel))
        assert status == 200 and body["status"] == "degraded" and body["matrix_crypto"] == report

        anna.client.olm.outbound_group_sessions.pop(room, None)  # type: ignore[union-attr]  # as Element rotates
        await encrypted_say(anna, room, "Und jetzt?")
        [answer] = await anna.wait_for(room, bot.said)
        assert isinstance(answer, RoomMessageText) and answer.body == "Jetzt lese ich dich wieder."
    assert private(folder) == []
    assert (await doctor(bot))["matrix crypto"][0] is True


@ON_ONE_SYNAPSE
async def test_an_old_store_sealed_with_nios_default_key_is_sealed_anew(bot: Bot) -> None:
    folder = bot.tmp / "older"
    channel = bot.channel(data_dir=folder, pickle_key=NIO_DEFAULT_KEY)  # as an older mnemo left it
    async with running(channel):
        assert channel.client is not None
        device, before = str(channel.client.device_id), channel.client.olm.account.identity_keys  # type: ignore
    assert not (folder / "pickle_key").exists()
    async with running(bot.channel(data_dir=folder)) as channel:  # this version: a key of its own
        assert channel.client is not None and str(channel.client.device_id) == device  # the same device, kept
        assert channel.client.olm.account.identity_keys == before  # type: ignore[union-attr]
    key = (folder / "pickle_key").read_text()
    assert local_identity(folder, bot.bot_id, device, NIO_DEFAULT_KEY, reseal=False) is None  # sealed anew
    assert local_identity(folder, bot.bot_id, device, key, reseal=False) == before["ed25519"]


@ON_ONE_SYNAPSE
async def test_with_an_access_token_a_lost_store_stops_the_start_with_what_to_do(bot: Bot, tmp_path: Path) -> None:
    user_id, token, device = await bot.syn.register(bot.syn.fresh_name("tokenbot"), PASSWORD)
    folder = tmp_path / "token"
    channel = bot.channel(user_id=user_id, password=None, access_token=token, data_dir=folder)
    async with running(channel):
        assert channel.client is not None and channel.client.device_id == device
    assert lose_store(folder, user_id)
    with pytest.raises(ConfigError) as refused:
        await bot.channel(user_id=user_id, password=None, access_token=token, data_dir=folder).start()
    message = str(refused.value)
    assert device in message and "MNEMO_MATRIX_ACCESS_TOKEN" in message and "/_matrix/client/v3/login" in message
    assert not list(folder.glob(f"{user_id}_*.db")), "nio made no new key account under the old device"
    client = AsyncClient(bot.syn.url, user_id)
    try:
        client.access_token = token
        assert await whoami_status(bot.syn.url, token) == 200  # the operator's token was left alone
    finally:
        await client.close()
