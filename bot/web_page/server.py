"""Serve an ASGI app with uvicorn as a task in mnemo's own event loop; started and stopped with the channels."""
from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Iterator

import uvicorn
from starlette.types import ASGIApp

from bot.errors import ConfigError

log = logging.getLogger(__name__)


class _Server(uvicorn.Server):
    """uvicorn's server without its own signal handlers: mnemo's `main` owns SIGINT and SIGTERM."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class WebServer:
    """One uvicorn server for `app` on host:port (port 0: a free one, see `port` after `start`)."""

    def __init__(self, app: ASGIApp, host: str, port: int) -> None:
        self.app, self.host, self.port = app, host, port
        self._server: _Server | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Bind the address (a ConfigError when it cannot be) and serve until `stop`."""
        try:
            family = socket.getaddrinfo(self.host, self.port, type=socket.SOCK_STREAM)[0][0]
            sock = socket.create_server((self.host, self.port), family=family, reuse_port=False)
        except OSError as exc:
            raise ConfigError(f"MNEMO_WEB_LISTEN: cannot listen on {self.host}:{self.port} ({exc}).") from exc
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(self.app, log_config=None, lifespan="off", access_log=False, proxy_headers=False,
                                server_header=False, timeout_graceful_shutdown=5)
        self._server = _Server(config)
        self._task = asyncio.create_task(self._server.serve(sockets=[sock]), name="web server")
        while not self._server.started:
            if self._task.done():  # uvicorn gave up starting; its reason is in the log
                sock.close()
                self._task.result()
                raise ConfigError(f"MNEMO_WEB_LISTEN: the web server on {self.host}:{self.port} did not start.")
            await asyncio.sleep(0.01)
        log.info("web server listening on %s:%s", self.host, self.port)

    async def stop(self) -> None:
        """Finish the open requests (a few seconds at most) and close the socket."""
        if self._server is None or self._task is None:
            return
        self._server.should_exit = True
        await self._task
        self._server = self._task = None
