"""The Matrix login and the files that keep it across restarts: the session and the sync token."""
from __future__ import annotations

import json
import logging
from pathlib import Path

from nio import AsyncClient, LoginResponse, WhoamiResponse

from bot.channels.matrix.messages import failure
from bot.errors import ConfigError, MatrixError
from bot.private_files import write_private

log = logging.getLogger(__name__)


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
                     device_name: str) -> None:
        """Use the access token, the saved session, or the password (saving the new session)."""
        if access_token:
            client.access_token = access_token
            client.restore_login(self.user_id, await self._whoami_device(client), access_token)
            return
        if not password:
            raise ConfigError("The matrix channel needs MNEMO_MATRIX_PASSWORD or MNEMO_MATRIX_ACCESS_TOKEN.")
        session = self._load()
        if session:
            client.restore_login(self.user_id, session["device_id"], session["access_token"])
            checked = await client.whoami()
            if isinstance(checked, WhoamiResponse):
                return
            if checked.status_code != "M_UNKNOWN_TOKEN":
                raise MatrixError(f"could not check the saved Matrix session: {failure(checked)}")
            log.warning("the saved Matrix session no longer works; logging in again as device %s",
                        session["device_id"])
        response = await client.login(password, device_name=device_name)
        if not isinstance(response, LoginResponse):
            raise ConfigError(f"The Matrix login as {self.user_id} at {self.homeserver} failed "
                              f"({failure(response)}); check MNEMO_MATRIX_USER_ID and MNEMO_MATRIX_PASSWORD.")
        write_private(self.session_path, json.dumps({
            "homeserver": self.homeserver, "user_id": response.user_id,
            "device_id": response.device_id, "access_token": response.access_token,
        }))
        log.info("logged in to Matrix as %s, new device %s", response.user_id, response.device_id)

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
