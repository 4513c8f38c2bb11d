"""A real, throwaway Synapse homeserver on 127.0.0.1 for integration tests."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import secrets
import socket
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import Any, Self
from urllib.parse import quote

import aiohttp
import yaml
from signedjson.key import generate_signing_key, write_signing_keys

_FAST: dict[str, float] = {"per_second": 10_000, "burst_count": 10_000}
_FLAT_LIMITS = (
    "message registration admin_redaction joins_per_room key_requests 3pid_validation"
    " third_party_invite media_create delayed_event_mgmt room_creation reports"
    " user_directory profile"
)
_RATE_LIMITS: dict[str, Any] = {
    **{f"rc_{name}": _FAST for name in _FLAT_LIMITS.split()},
    "rc_login": {"address": _FAST, "account": _FAST, "failed_attempts": _FAST},
    "rc_joins": {"local": _FAST, "remote": _FAST},
    "rc_invites": {"per_room": _FAST, "per_user": _FAST, "per_issuer": _FAST},
    "rc_presence": {"per_user": _FAST},
}
_LOG_CONFIG = """\
version: 1
formatters: {f: {format: "%(asctime)s %(levelname)s %(name)s: %(message)s"}}
handlers: {file: {class: logging.FileHandler, filename: "LOG", formatter: f}}
root: {level: WARNING, handlers: [file]}
disable_existing_loggers: false
"""


def _free_port() -> int:
    """Return a currently unused TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _listener(port: int) -> dict[str, Any]:
    """Return a plain-HTTP client-API listener bound to 127.0.0.1 only."""
    return {
        "port": port,
        "bind_addresses": ["127.0.0.1"],
        "type": "http",
        "resources": [{"names": ["client"], "compress": False}],
    }


def _tail(path: Path, lines: int = 40) -> str:
    """Return the last lines of a file, or a note if it is missing."""
    if not path.exists():
        return f"<{path.name} missing>"
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


class Synapse:
    """A Synapse subprocess rooted in a directory: `async with Synapse(tmp) as syn`."""

    def __init__(
        self,
        directory: Path | str,
        server_name: str = "localhost",
        timeout: float = 30.0,
    ) -> None:
        self.dir = Path(directory).resolve()
        self.server_name = server_name
        self.timeout = timeout
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.shared_secret = secrets.token_hex(16)
        self.config_path = self.dir / "homeserver.yaml"
        self.log_path = self.dir / "homeserver.log"
        self.console_path = self.dir / "synapse.console.log"
        self.startup_seconds: float | None = None
        self._proc: asyncio.subprocess.Process | None = None
        self._names = itertools.count(1)
        self.as_token = secrets.token_hex(16)  # the tests' application service (see `write_appservice`)

    def fresh_name(self, localpart: str) -> str:
        """A localpart not yet used on this server: 'anna' becomes 'anna7' (tests share one server)."""
        return f"{localpart}{next(self._names)}"

    def write_config(self) -> Path:
        """Write homeserver.yaml, log.config and signing.key into the directory."""
        d = self.dir
        d.mkdir(parents=True, exist_ok=True)
        key_path = d / "signing.key"
        if not key_path.exists():
            with key_path.open("w") as f:
                write_signing_keys(f, [generate_signing_key("a_test")])
        log_config = _LOG_CONFIG.replace("LOG", str(self.log_path))
        (d / "log.config").write_text(log_config)
        config: dict[str, Any] = {
            "server_name": self.server_name,
            "public_baseurl": self.url + "/",
            "pid_file": str(d / "homeserver.pid"),
            "listeners": [_listener(self.port)],
            "database": {
                "name": "sqlite3",
                "args": {"database": str(d / "homeserver.db")},
            },
            "log_config": str(d / "log.config"),
            "media_store_path": str(d / "media_store"),
            "signing_key_path": str(key_path),
            "registration_shared_secret": self.shared_secret,
            "macaroon_secret_key": secrets.token_hex(16),
            "form_secret": secrets.token_hex(16),
            "enable_registration": False,
            "report_stats": False,
            "enable_metrics": False,
            "suppress_key_server_warning": True,
            "trusted_key_servers": [],
            "federation_domain_whitelist": [],
            "presence": {"enabled": False},
            "url_preview_enabled": False,
            "app_service_config_files": [str(self.write_appservice())],
            **_RATE_LIMITS,
        }
        self.config_path.write_text(yaml.safe_dump(config))
        return self.config_path

    def write_appservice(self) -> Path:
        """Register an application service that may act as the `@massaged_…` users and say when their messages were
        sent (`ts`), as a bridge does when it brings in old messages; it receives nothing (no url)."""
        path = self.dir / "appservice.yaml"
        path.write_text(yaml.safe_dump({
            "id": "mnemo-tests", "url": None, "as_token": self.as_token, "hs_token": secrets.token_hex(16),
            "sender_localpart": "massaging", "rate_limited": False,
            "namespaces": {"users": [{"exclusive": True, "regex": f"@massaged_.*:{self.server_name}"}]},
        }))
        return path

    async def massaged_user(self, localpart: str) -> tuple[str, str, str]:
        """Register `@massaged_<localpart>` through the application service and log it in as a device of its own;
        (user_id, access token, device id). Its messages may carry the time they were sent (`send_at`)."""
        auth = {"Authorization": f"Bearer {self.as_token}"}
        async with aiohttp.ClientSession(headers=auth) as http:
            name = f"massaged_{localpart}"
            async with http.post(f"{self.url}/_matrix/client/v3/register",
                                 json={"type": "m.login.application_service", "username": name}) as resp:
                assert resp.status == 200, await resp.text()
            login = {"type": "m.login.application_service", "identifier": {"type": "m.id.user", "user": name}}
            async with http.post(f"{self.url}/_matrix/client/v3/login", json=login) as resp:
                data = await resp.json()
                assert resp.status == 200, data
        return data["user_id"], data["access_token"], data["device_id"]

    async def send_at(self, user_id: str, room_id: str, content: dict[str, Any], sent_ms: int) -> str:
        """Send a message as one of the service's users, saying it was sent at `sent_ms` (its origin_server_ts)."""
        txn = secrets.token_hex(8)
        url = (f"{self.url}/_matrix/client/v3/rooms/{quote(room_id)}/send/m.room.message/{txn}"
               f"?user_id={quote(user_id)}&ts={sent_ms}")
        auth = {"Authorization": f"Bearer {self.as_token}"}
        async with aiohttp.ClientSession(headers=auth) as http, http.put(url, json=content) as resp:
            data = await resp.json()
            assert resp.status == 200, data
        return str(data["event_id"])

    async def start(self) -> None:
        """Write the config, spawn Synapse and wait until the client API answers."""
        self.write_config()
        started = time.monotonic()
        argv = ["-m", "synapse.app.homeserver", "-c", str(self.config_path)]
        with self.console_path.open("wb") as out:
            self._proc = await asyncio.create_subprocess_exec(
                sys.executable,
                *argv,
                cwd=self.dir,
                stdout=out,
                stderr=asyncio.subprocess.STDOUT,
                stdin=asyncio.subprocess.DEVNULL,
            )
        try:
            await self._wait_ready(started)
        except BaseException:
            await self.stop()
            raise
        self.startup_seconds = time.monotonic() - started

    async def _wait_ready(self, started: float) -> None:
        """Poll /_matrix/client/versions until it answers 200 or the timeout expires."""
        assert self._proc is not None
        probe = f"{self.url}/_matrix/client/versions"
        async with aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=2)
        ) as http:
            while time.monotonic() - started < self.timeout:
                if self._proc.returncode is not None:
                    raise RuntimeError(
                        f"Synapse exited with {self._proc.returncode}\n{self.logs()}"
                    )
                try:
                    async with http.get(probe) as resp:
                        if resp.status == 200:
                            return
                except (TimeoutError, aiohttp.ClientError):
                    pass
                await asyncio.sleep(0.1)
        raise TimeoutError(
            f"Synapse not ready after {self.timeout:.0f}s at {self.url}\n{self.logs()}"
        )

    def logs(self) -> str:
        """Return the tails of the console output and the log file."""
        console, log = _tail(self.console_path), _tail(self.log_path)
        return f"--- console ---\n{console}\n--- homeserver.log ---\n{log}"

    async def stop(self) -> None:
        """Terminate Synapse, killing it if it does not exit within 10 s."""
        proc, self._proc = self._proc, None
        if proc is None or proc.returncode is not None:
            return
        proc.terminate()
        try:
            await asyncio.wait_for(proc.wait(), 10)
        except TimeoutError:
            proc.kill()
            await proc.wait()

    async def register(
        self, localpart: str, password: str, admin: bool = False
    ) -> tuple[str, str, str]:
        """Register via the shared-secret admin API; return (user_id, token, device)."""
        endpoint = f"{self.url}/_synapse/admin/v1/register"
        async with aiohttp.ClientSession() as http:
            async with http.get(endpoint) as resp:
                resp.raise_for_status()
                nonce: str = (await resp.json())["nonce"]
            role = "admin" if admin else "notadmin"
            msg = f"{nonce}\0{localpart}\0{password}\0{role}".encode()
            mac = hmac.new(self.shared_secret.encode(), msg, hashlib.sha1).hexdigest()
            body = {
                "nonce": nonce,
                "username": localpart,
                "password": password,
                "admin": admin,
                "mac": mac,
            }
            async with http.post(endpoint, json=body) as resp:
                data = await resp.json()
                if resp.status != 200:
                    raise RuntimeError(
                        f"register {localpart!r} failed: {resp.status} {data}"
                    )
        return data["user_id"], data["access_token"], data["device_id"]

    def user_id(self, localpart: str) -> str:
        """Return the full Matrix ID for a localpart on this server."""
        return f"@{localpart}:{self.server_name}"

    async def __aenter__(self) -> Self:
        """Start the server."""
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Stop the server."""
        await self.stop()
