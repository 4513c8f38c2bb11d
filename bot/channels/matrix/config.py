"""The Matrix channel's settings: where the homeserver is, who may write, which rooms, how it syncs."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from nio import AsyncClientConfig
from nio.crypto import ENCRYPTION_ENABLED

from bot.channels.access import AccessConfig, UnknownUsers

E2E_AVAILABLE: bool = ENCRYPTION_ENABLED  # matrix-nio[e2e] (vodozemac) is installed
TIMELINE_LIMIT = 50  # events per room and sync; an older gap is fetched page by page
RETRIES = 3  # nio's retries of a request that cannot connect (its default is forever)


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
    pickle_key: str | None = None  # seals the crypto store's keys (None: a secret kept in data_dir/pickle_key)
    # With several workers on one PostgreSQL database: this worker's name; it syncs only while it holds the lease.
    worker: str | None = None


def access_config(config: MatrixConfig) -> AccessConfig:
    """The access part of the Matrix settings (admins of other channels are left out)."""
    return AccessConfig(allowed=frozenset(config.allowed_users),
                        admins=frozenset(a for a in config.admins if a.startswith("@")),
                        unknown_users=config.unknown_users, pairing_minutes=config.pairing_minutes)


def client_config(config: MatrixConfig) -> AsyncClientConfig:
    """nio's settings: the crypto store private and sealed with mnemo's pickle key (crypto_store.py).

    The sync token is saved by the channel, after the events are recorded; nio would save it earlier. Rate limits
    are waited out by the channel (Outgoing.patiently), where a send can be given up or skipped.
    """
    made = AsyncClientConfig(encryption_enabled=config.encryption, store_sync_tokens=False, max_timeouts=RETRIES,
                             max_limit_exceeded=0)
    if not config.encryption:
        return made
    from bot.channels.matrix.crypto_store import PrivateStore  # needs matrix-nio[e2e], as encryption does
    from bot.channels.matrix.device_keys import pickle_key

    return dataclasses.replace(made, store=PrivateStore, pickle_key=pickle_key(config.data_dir, config.pickle_key))
