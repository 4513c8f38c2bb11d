"""The Matrix channel's settings: where the homeserver is, who may write, which rooms, how it syncs."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

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
    # With several workers on one PostgreSQL database: this worker's name; it syncs only while it holds the lease.
    worker: str | None = None


def access_config(config: MatrixConfig) -> AccessConfig:
    """The access part of the Matrix settings (admins of other channels are left out)."""
    return AccessConfig(allowed=frozenset(config.allowed_users),
                        admins=frozenset(a for a in config.admins if a.startswith("@")),
                        unknown_users=config.unknown_users, pairing_minutes=config.pairing_minutes)
