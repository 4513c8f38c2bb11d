"""Whether the Matrix device still has its keys: the store's identity key against the homeserver's, the pickle key,
and what /healthz says of the crypto.

When the crypto store is lost while the login (session.json, or an access token) stays, nio would make a new key
account under the same device id, and nothing anybody sends could be read again. So the start compares the identity
key the store holds (crypto_store.py) with the one the homeserver published for the device (`verdict`, pure).
"""
from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from nio import Api, AsyncClient

from bot.private_files import write_private

log = logging.getLogger(__name__)

NIO_DEFAULT_KEY = "DEFAULT_KEY"  # what nio seals the keys with unless told otherwise
KEY_FILE = "pickle_key"
PRIVATE_DIR = 0o700

Verdict = Literal["ok", "lost"]


def verdict(local_key: str | None, published_key: str | None) -> Verdict:
    """Whether the device's keys are still here: 'lost' when the homeserver knows an identity key for the device
    and the store holds none or another one; a device that published none yet (a new login) is 'ok'."""
    if published_key is None:
        return "ok"
    return "ok" if local_key == published_key else "lost"


def pickle_key(data_dir: Path, configured: str | None, create: bool = True) -> str:
    """The key the store is sealed with: the setting, else the secret kept in `pickle_key` (made once when `create`;
    without it and without the file, nio's default, which a store of an older mnemo was sealed with)."""
    if configured:
        return configured
    path = data_dir / KEY_FILE
    if path.exists():
        return path.read_text(encoding="utf-8").strip()
    if not create:
        return NIO_DEFAULT_KEY
    key = secrets.token_urlsafe(32)
    data_dir.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
    write_private(path, key)
    log.info("made the Matrix crypto store's pickle key in %s", path)
    return key


async def published_identity(client: AsyncClient, device_id: str) -> str | None:
    """The identity key (ed25519) the homeserver published for one of the account's devices; None when none."""
    assert client.access_token and client.user_id
    method, path, data = Api.keys_query(client.access_token, {client.user_id})
    async with await client.send(method, path, data) as response:
        body = json.loads(await response.text()) if response.status == 200 else {}
    device = body.get("device_keys", {}).get(client.user_id, {}).get(device_id) or {}
    found = device.get("keys", {}).get(f"ed25519:{device_id}")
    return str(found) if found else None


def keys_check(data_dir: Path, key: str) -> Callable[[AsyncClient, str], Awaitable[bool]]:
    """What asks whether the store in `data_dir` still holds the keys the homeserver published for a device."""
    data_dir.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)

    async def kept(client: AsyncClient, device_id: str) -> bool:
        from bot.channels.matrix.crypto_store import local_identity  # needs matrix-nio[e2e], as encryption does

        assert client.user_id
        local = local_identity(data_dir, client.user_id, device_id, key)
        if verdict(local, await published_identity(client, device_id)) == "ok":
            return True
        log.error("the Matrix crypto store in %s %s the keys of device %s that the homeserver knows", data_dir,
                  "does not hold" if local is None else "holds other keys than", device_id)
        return False
    return kept


async def doctor_line(client: AsyncClient, data_dir: Path, device_id: str, configured: str | None) -> tuple[bool, str]:
    """`mnemo doctor`'s look at the crypto store of the running device (it only reads: nothing is sealed anew)."""
    from bot.channels.matrix.crypto_store import local_identity  # needs matrix-nio[e2e], as encryption does

    assert client.user_id
    key = pickle_key(data_dir, configured, create=False)
    local = local_identity(data_dir, client.user_id, device_id, key, reseal=False)
    if verdict(local, await published_identity(client, device_id)) == "lost":
        return False, (f"the crypto store in {data_dir} does not hold the keys of device {device_id}: nothing sent to "
                       f"it can be read; the next start logs in as a new device (with MNEMO_MATRIX_PASSWORD) or "
                       f"stops and says what to do (with MNEMO_MATRIX_ACCESS_TOKEN)")
    sealed = ("MNEMO_MATRIX_PICKLE_KEY" if configured else f"the key in {data_dir / KEY_FILE}"
              if key != NIO_DEFAULT_KEY else "nio's default key (sealed with a key of mnemo's own at the next start)")
    held = "holds its keys" if local else "is made at the next start"
    return True, f"device {device_id}: the crypto store in {data_dir} {held}, sealed with {sealed}"


def lost_with_token(homeserver: str, user_id: str, device_id: str, data_dir: Path) -> str:
    """What the operator must do when the keys of an access token's device are lost (mnemo cannot make a device)."""
    return (f"The Matrix crypto store in {data_dir} does not hold the keys of device {device_id}, which "
            f"MNEMO_MATRIX_ACCESS_TOKEN belongs to, so nothing sent to that device could be read. Put a new device's "
            f"token into MNEMO_MATRIX_ACCESS_TOKEN (curl -X POST {homeserver}/_matrix/client/v3/login -d "
            f"'{{\"type\": \"m.login.password\", \"identifier\": {{\"type\": \"m.id.user\", \"user\": "
            f"\"{user_id}\"}}, \"password\": \"...\"}}' prints it as access_token) and start mnemo again; "
            f"then remove the old session {device_id} in a Matrix client's session list.")


@dataclass
class CryptoHealth:
    """What /healthz says of the Matrix crypto: a device replaced at start, encrypted rooms it cannot read, and the
    encrypted messages given up since the start."""

    replaced: tuple[str, str] | None = None  # (the device whose keys were lost, the new one)
    replaced_at: float | None = None  # when, by the channel's clock
    unreadable_rooms: set[str] = field(default_factory=set)
    undecryptable: int = 0  # messages given up since the start
    ours: int = 0  # of them, encrypted for keys mnemo lost

    def replaced_by(self, lost: str | None, device: str | None, now: float) -> None:
        """Note that this start replaced the device `lost` (None: it did not) by `device`."""
        if lost is not None:
            self.replaced, self.replaced_at = (lost, str(device)), now

    def problem(self) -> str | None:
        """A short English line for the operator when the crypto needs a look, else None."""
        parts = []
        if self.unreadable_rooms:
            parts.append(f"{len(self.unreadable_rooms)} encrypted rooms cannot be read: end-to-end encryption is off")
        if self.undecryptable:
            parts.append(f"{self.undecryptable} encrypted messages could not be decrypted since the start"
                         + (f" ({self.ours} sent to the device whose keys were lost)" if self.ours else ""))
        return "; ".join(parts) or None

    def report(self, client: AsyncClient | None) -> dict[str, Any]:
        """The part of /healthz's body about the Matrix crypto (the rooms looked at now)."""
        if client is not None and client.olm is None:
            self.unreadable_rooms = {room.room_id for room in client.rooms.values() if room.encrypted}
        found: dict[str, Any] = {"ok": self.problem() is None, "undecryptable_since_start": self.undecryptable}
        if problem := self.problem():
            found["problem"] = problem
        if self.replaced is not None:
            found["device_replaced"] = {"lost": self.replaced[0], "now": self.replaced[1]}
        return found
