"""A server configured `per_person`: one process per person (scope), started on their first call of one of its tools,
working in a folder of theirs, `<data dir>/mcp/<server>/<companion>/<scope id>` (0700); closed after IDLE_SECONDS
without a call; on /deleteme closed and its folder deleted. What it keeps in its working directory is that person's
alone, and goes with them.

The tools it offers are listed once at the start, by a process started in a folder of its own that is deleted
again (`.listing`), so nobody's process runs before they use it.

Each worker runs its own processes in its own data directory. A /deleteme answered by another worker reaches them
through the database's tombstones (`catch_up`): before a person's process is started, and every SWEEP_SECONDS, a
worker ends the processes of erased scopes that were started before the erasure and deletes their folders (a folder
without a process when it was last changed before the erasure: after a restart, the worker catches up with every
tombstone).
"""
from __future__ import annotations

import asyncio
import dataclasses
import logging
import shutil
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path

from mcp.types import Tool

from bot.mcp.config import ServerConfig, Stdio
from bot.mcp.servers import ServerConnection
from bot.private_files import private_folders
from memory import Scope, ScopeErased

log = logging.getLogger(__name__)

MCP_DIR = "mcp"  # under the data directory: the per-person servers' working directories
IDLE_SECONDS = 15 * 60.0  # a person's server process without a call this long is closed (started again when used)
SWEEP_SECONDS = 60.0  # how often idle processes are looked for
_LISTING = ".listing"

# The /deleteme tombstones after the given one (MemoryStore.scopes_erased).
ErasedSince = Callable[[int], Awaitable[Sequence[ScopeErased]]]


def person_folder(data_dir: Path, server: str, scope: Scope) -> Path:
    """The working directory of one person's process of a per-person server."""
    return data_dir / MCP_DIR / server / scope.companion_id / str(scope.id)


def person_folders(data_dir: Path, scope: Scope) -> list[Path]:
    """The working directories of the scope's processes of every per-person server, configured now or before."""
    root = data_dir / MCP_DIR
    return sorted(p for p in root.glob(f"*/{scope.companion_id}/{scope.id}") if p.is_dir()) if root.is_dir() else []


def outdated(erased: ScopeErased, started: float | None, changed: float | None) -> bool:
    """Whether an erasure reaches a scope's process and folder: a process started before it (`started`, None: none
    runs), or with none running, a folder last changed before it (`changed`: its mtime, None: no folder)."""
    if started is not None:
        return started <= erased.at
    return changed is not None and changed <= erased.at


def idle(last_used: Mapping[int, float], now: float, limit: float = IDLE_SECONDS) -> list[int]:
    """The scopes whose process has had no call for `limit` seconds at `now`."""
    return sorted(scope_id for scope_id, at in last_used.items() if now - at >= limit)


def in_folder(config: ServerConfig, folder: Path) -> ServerConfig:
    """The server's configuration to start in `folder` (a relative command path stays the one mnemo was given)."""
    transport = config.transport
    assert isinstance(transport, Stdio)  # per_person is for stdio servers only (bot/mcp/config.py)
    command = transport.command
    if "/" in command and not Path(command).is_absolute():
        command = str(Path(command).resolve())
    return dataclasses.replace(config, transport=dataclasses.replace(transport, command=command, cwd=str(folder)))


class PersonalServer:
    """One configured per-person server: a process per scope, started on first use, closed when idle or erased."""

    def __init__(self, config: ServerConfig, data_dir: Path, clock: Callable[[], float] = time.time,
                 erased: ErasedSince | None = None) -> None:
        self.config, self.data_dir, self.clock, self.erased = config, data_dir, clock, erased
        self._listed: tuple[Tool, ...] = ()
        self._running: dict[int, ServerConnection] = {}
        self._started: dict[int, float] = {}
        self._last_used: dict[int, float] = {}
        self._starting = asyncio.Lock()
        self._seen = 0  # the last tombstone caught up with

    @property
    def name(self) -> str:
        """The server's name in the configuration."""
        return self.config.name

    @property
    def tools(self) -> tuple[Tool, ...]:
        """The tools the server listed at the start."""
        return self._listed

    @property
    def running(self) -> dict[int, ServerConnection]:
        """The processes running now, by scope id."""
        return dict(self._running)

    async def open(self) -> None:
        """List the server's tools with a process of its own, in a folder deleted again; ToolServerError when it
        cannot be started."""
        folder = self.data_dir / MCP_DIR / self.name / _LISTING
        private_folders(self.data_dir, folder)
        probe = ServerConnection(in_folder(self.config, folder))
        try:
            await probe.open()
            self._listed = probe.tools
        finally:
            await probe.close()
            shutil.rmtree(folder)

    async def for_scope(self, scope: Scope) -> ServerConnection:
        """The scope's process (started in its folder on first use); idle ones of others are closed meanwhile."""
        now = self.clock()
        await self.close_idle(now)
        async with self._starting:
            connection = self._running.get(scope.id)
            if connection is None:
                await self.catch_up()  # a /deleteme another worker answered: its old folder goes first
                folder = person_folder(self.data_dir, self.name, scope)
                private_folders(self.data_dir, folder)
                connection = ServerConnection(in_folder(self.config, folder))
                await connection.open()
                self._running[scope.id] = connection
                self._started[scope.id] = now
                log.info("MCP server %s started for scope %s", self.name, scope.id)
            self._last_used[scope.id] = now
        return connection

    async def close_idle(self, now: float) -> list[int]:
        """Close the processes without a call for IDLE_SECONDS; the scopes they were for."""
        closed = idle(self._last_used, now)
        for scope_id in closed:
            await self._close(scope_id)
            log.info("MCP server %s for scope %s closed after %g s without a call", self.name, scope_id, IDLE_SECONDS)
        return closed

    async def catch_up(self) -> list[int]:
        """Follow the /deleteme answered by any worker since the last look: end the processes started before it and
        delete their folders (`outdated`); the scopes cleared."""
        if self.erased is None:
            return []
        cleared = []
        for erased in await self.erased(self._seen):
            self._seen = max(self._seen, erased.id)
            running = erased.scope_id in self._running
            if running and not outdated(erased, self._started[erased.scope_id], None):
                continue  # started after the erasure: the person's new beginning
            if running:
                await self._close(erased.scope_id)
            folders = [p for p in (self.data_dir / MCP_DIR / self.name).glob(f"*/{erased.scope_id}") if p.is_dir()]
            gone = [f for f in folders if running or outdated(erased, None, f.stat().st_mtime)]
            for folder in gone:
                shutil.rmtree(folder)
            if running or gone:
                cleared.append(erased.scope_id)
                log.info("MCP server %s: scope %s was erased (/deleteme); its process and folder are gone",
                         self.name, erased.scope_id)
        return cleared

    async def forget(self, scope: Scope) -> None:
        """Close the scope's process and delete its working directory (/deleteme)."""
        await self._close(scope.id)
        folder = person_folder(self.data_dir, self.name, scope)
        if folder.is_dir():
            shutil.rmtree(folder)

    async def close(self) -> None:
        """Close every process."""
        for scope_id in list(self._running):
            await self._close(scope_id)

    async def _close(self, scope_id: int) -> None:
        self._last_used.pop(scope_id, None)
        self._started.pop(scope_id, None)
        connection = self._running.pop(scope_id, None)
        if connection is not None:
            await connection.close()


async def sweep(servers: list[PersonalServer], every: float = SWEEP_SECONDS) -> None:
    """Close idle processes every `every` seconds, until cancelled."""
    while True:
        await asyncio.sleep(every)
        for server in servers:
            try:
                await server.close_idle(server.clock())
                await server.catch_up()
            except Exception:  # the sweep goes on for the others; the next one tries again
                log.exception("closing the idle or erased processes of MCP server %s failed", server.name)
