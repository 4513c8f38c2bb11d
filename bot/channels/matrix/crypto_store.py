"""The Matrix crypto store (needs matrix-nio[e2e]): its files private, its keys sealed with mnemo's pickle key.

nio keeps the device's key account and its sessions in `<user>_<device>.db` (SQLite) beside files of trusted
devices, all in the channel's data directory. They are made only mnemo's user may read (0600 in 0700), and the
keys in them are sealed with a pickle key that is not nio's default: MNEMO_MATRIX_PICKLE_KEY, else a secret made
once and kept in `pickle_key` beside the session (device_keys.py). A store sealed with nio's default key (by an
older mnemo) is sealed again with the new one at the next start.
"""
from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import vodozemac
from nio.store import DefaultStore

from bot.channels.matrix.device_keys import NIO_DEFAULT_KEY

log = logging.getLogger(__name__)

PRIVATE_FILE, PRIVATE_DIR = 0o600, 0o700
_UNPICKLE_ERRORS = (vodozemac.PickleException, vodozemac.LibolmPickleException, ValueError, UnicodeDecodeError)


def store_file(data_dir: Path, user_id: str, device_id: str) -> Path:
    """Where nio keeps the keys of this device."""
    return data_dir / f"{user_id}_{device_id}.db"


def make_private(data_dir: Path, user_id: str, device_id: str) -> None:
    """The device's store file there before nio opens it (SQLite gives its journal the same mode), and any file an
    older mnemo left readable by others made private."""
    data_dir.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
    os.chmod(data_dir, PRIVATE_DIR)
    os.close(os.open(store_file(data_dir, user_id, device_id), os.O_WRONLY | os.O_CREAT, PRIVATE_FILE))
    for path in data_dir.glob(f"{user_id}_*"):
        if path.is_file() and path.stat().st_mode & 0o077:
            os.chmod(path, PRIVATE_FILE)


class PrivateStore(DefaultStore):  # type: ignore[misc]
    """nio's default store, its files made only mnemo's user may read."""

    def __post_init__(self) -> None:
        make_private(Path(self.store_path), self.user_id, self.device_id)
        super().__post_init__()


def local_identity(data_dir: Path, user_id: str, device_id: str, key: str, reseal: bool = True) -> str | None:
    """The identity key (ed25519) the store holds for the device; None when it holds none or cannot be opened.

    A store sealed with nio's default key is sealed again with `key` when `reseal` (`mnemo doctor` only reads).
    """
    if not store_file(data_dir, user_id, device_id).exists():
        return None
    store = PrivateStore(user_id, device_id, str(data_dir), key)
    try:
        try:
            account = store.load_account()
        except _UNPICKLE_ERRORS:
            if key == NIO_DEFAULT_KEY:
                raise
            account = _reseal(store, key) if reseal else _with_key(store, NIO_DEFAULT_KEY).load_account()
    except _UNPICKLE_ERRORS as exc:
        log.warning("the Matrix crypto store of device %s cannot be opened with its pickle key (%s)", device_id,
                    type(exc).__name__)
        return None
    finally:
        store.database.close()
    return None if account is None else str(account.identity_keys["ed25519"])


def _with_key(store: PrivateStore, key: str) -> PrivateStore:
    store.pickle_key = key
    return store


def _reseal(store: PrivateStore, key: str) -> Any:
    """Read the account and sessions sealed with nio's default key and write them sealed with `key`."""
    old = _with_key(store, NIO_DEFAULT_KEY)
    account = old.load_account()
    sessions = [(sender, session) for sender, found in old.load_sessions().items() for session in found]
    groups = list(old.load_inbound_group_sessions())
    new = _with_key(store, key)
    if account is not None:
        new.save_account(account)
    for sender, session in sessions:
        new.save_session(sender, session)
    for group in groups:
        new.save_inbound_group_session(group)
    log.warning("the Matrix crypto store of device %s was sealed with nio's default key; sealed it with mnemo's own "
                "(%d sessions, %d room keys)", store.device_id, len(sessions), len(groups))
    return account


