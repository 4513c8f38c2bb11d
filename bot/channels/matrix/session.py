"""The Matrix login and the files that keep it across restarts: the session and the sync token."""
from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

from nio import AsyncClient, LoginResponse, LogoutResponse, WhoamiResponse

from bot.channels.matrix.config import MatrixConfig
from bot.channels.matrix.device_keys import CryptoHealth, keys_check, lost_with_token, pickle_key
from bot.channels.matrix.messages import failure
from bot.errors import ConfigError, MatrixError
from bot.private_files import write_private

log = logging.getLogger(__name__)

KeysKept = Callable[[AsyncClient, str], Awaitable[bool]]  # whether the store holds this device's keys


class Session:
    """The saved login (data_dir/session.json) and sync position (data_dir/sync_token) of one account."""

    def __init__(self, data_dir: Path, homeserver: str, user_id: str) -> None:
        self.homeserver = homeserver
        self.user_id = user_id
        self.session_path = data_dir / "session.json"
        self.token_path = data_dir / "sync_token"

    def load_token(self) -> str | None:
        """The sync token saved after the last recorded sync, or None on a first start."""
        if not self.token_path.exists():
            return None
        return self.token_path.read_text(encoding="utf-8").strip() or None

    def save_token(self, token: str) -> None:
        """Remember how far the events were recorded."""
        write_private(self.token_path, token)

    async def log_in(self, client: AsyncClient, password: str | None, access_token: str | None,
                     device_name: str, keys_kept: KeysKept | None = None) -> str | None:
        """Use the access token, the saved session, or the password (saving the new session); the device whose
        keys were lost and which this login replaced, else None.

        `keys_kept` (with encryption on) asks, before nio opens the device's store, whether the store still holds
        the keys the homeserver knows for it. When not, the saved session's device is logged out and the password
        logs in as a new device; an access token's device cannot be replaced, so the start stops with what to do.
        """
        if access_token:
            client.access_token = access_token
            device = await self._whoami_device(client)
            if keys_kept is not None and not await keys_kept(client, device):
                raise ConfigError(lost_with_token(self.homeserver, self.user_id, device, self.session_path.parent))
            client.restore_login(self.user_id, device, access_token)
            return None
        if not password:
            raise ConfigError("The matrix channel needs MNEMO_MATRIX_PASSWORD or MNEMO_MATRIX_ACCESS_TOKEN.")
        session = self._load()
        lost = again = None
        if session:
            resumed, lost, again = await self._resume(client, session, keys_kept)
            if resumed:
                return None
        await self._log_in_anew(client, password, device_name, again)
        if lost is not None:
            log.warning("Matrix device %s lost its keys; logged in as new device %s (what was sent to %s before "
                        "cannot be read)", lost, client.device_id, lost)
        return lost

    async def _resume(self, client: AsyncClient, session: dict[str, str],
                      keys_kept: KeysKept | None) -> tuple[bool, str | None, str | None]:
        """Go on with the saved session: (resumed, the device whose keys were lost, the device to log in as again).

        The token is checked before nio opens the device's store, since nio would make new keys in a lost one.
        """
        device = session["device_id"]
        client.access_token = session["access_token"]
        checked = await client.whoami()
        if isinstance(checked, WhoamiResponse):
            if keys_kept is None or await keys_kept(client, device):
                client.restore_login(self.user_id, device, session["access_token"])
                return True, None, None
            await self._log_out(client, device)
            return False, device, None
        if checked.status_code != "M_UNKNOWN_TOKEN":
            raise MatrixError(f"could not check the saved Matrix session: {failure(checked)}")
        log.warning("the saved Matrix session no longer works; logging in again as device %s", device)
        return False, None, device  # the same device logs in again, keeping its keys

    async def _log_in_anew(self, client: AsyncClient, password: str, device_name: str, device: str | None) -> None:
        """Log in with the password as `device` (None: a new one) and save the session."""
        client.access_token, client.device_id = "", device  # nio logs in as the device it knows
        response = await client.login(password, device_name=device_name)
        if not isinstance(response, LoginResponse):
            raise ConfigError(f"The Matrix login as {self.user_id} at {self.homeserver} failed "
                              f"({failure(response)}); check MNEMO_MATRIX_USER_ID and MNEMO_MATRIX_PASSWORD.")
        write_private(self.session_path, json.dumps({
            "homeserver": self.homeserver, "user_id": response.user_id,
            "device_id": response.device_id, "access_token": response.access_token,
        }))
        log.info("logged in to Matrix as %s, new device %s", response.user_id, response.device_id)

    async def _log_out(self, client: AsyncClient, device: str) -> None:
        """Log out the device whose keys were lost, so the person's clients stop encrypting for it."""
        response = await client.logout()
        if not isinstance(response, LogoutResponse):
            log.warning("could not log out Matrix device %s (remove it in a client's session list): %s", device,
                        failure(response))

    async def _whoami_device(self, client: AsyncClient) -> str:
        """The device of the configured access token."""
        response = await client.whoami()
        if not isinstance(response, WhoamiResponse) or response.user_id != self.user_id or not response.device_id:
            raise ConfigError(f"MNEMO_MATRIX_ACCESS_TOKEN does not belong to a device of {self.user_id} at "
                              f"{self.homeserver} ({failure(response)}).")
        return response.device_id

    def saved_token(self) -> str | None:
        """The access token of the saved session of this account, if there is one (for checks that add no device)."""
        session = self._load()
        return session["access_token"] if session else None

    def _load(self) -> dict[str, str] | None:
        """The saved login for this homeserver and user, or None."""
        if not self.session_path.exists():
            return None
        session = json.loads(self.session_path.read_text(encoding="utf-8"))
        if session.get("homeserver") != self.homeserver or session.get("user_id") != self.user_id:
            log.info("the saved Matrix session is for another account; logging in afresh")
            return None
        return {"device_id": str(session["device_id"]), "access_token": str(session["access_token"])}


async def log_in(session: Session, client: AsyncClient, config: MatrixConfig, crypto: CryptoHealth,
                 clock: Callable[[], float]) -> None:
    """Log the channel in; with encryption on, as a new device when the store lost the keys of the saved one."""
    config.data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)  # the session, the sync token, the keys
    kept = keys_check(config.data_dir, pickle_key(config.data_dir, config.pickle_key)) if config.encryption else None
    lost = await session.log_in(client, config.password, config.access_token, config.device_name, kept)
    crypto.replaced_by(lost, client.device_id, clock())
