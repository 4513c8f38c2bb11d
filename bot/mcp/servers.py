"""One connection per MCP server, through the official SDK's `Client` over stdio or streamable HTTP.

The SDK keeps a task group open for as long as a connection lives; each connection therefore lives in a task of
its own, so a server that dies takes down that task and nothing else. A call that finds the connection closed
starts it again once. Every SDK error is mapped here to ToolServerError, with one sentence saying what happened.
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from typing import Any

import httpx2
from mcp import Client, MCPError, StdioServerParameters
from mcp.client import Transport
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CONNECTION_CLOSED, REQUEST_TIMEOUT, CallToolResult, Implementation, Tool
from pydantic import ValidationError

from bot.errors import ToolServerError
from bot.mcp.config import Http, ServerConfig
from memory import Scope

log = logging.getLogger(__name__)

START_SECONDS = 30.0  # starting or reaching a server may take this long even when its calls must be quicker
MAX_PAGES = 20  # tools/list pages read at most (a server that pages forever cannot hang the start)
STREAM_READ_SECONDS = 300.0  # an HTTP response stream may stay open this long (each call has its own timeout)
CLIENT = Implementation(name="mnemo", version="0.1.0")


@dataclass
class _Live:
    """An open connection: the SDK client, and how to end its task."""

    client: Client
    stop: asyncio.Event
    task: asyncio.Task[None]


def reason(exc: BaseException) -> str:
    """One short sentence for what went wrong, from the innermost error of the SDK's exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, FileNotFoundError):
        return f"command not found ({exc.filename or exc})"
    if isinstance(exc, TimeoutError):
        return "no answer in time"
    if isinstance(exc, MCPError) and exc.error.code == CONNECTION_CLOSED:
        return "the server closed the connection"
    return str(exc) or type(exc).__name__


def where(config: ServerConfig) -> str:
    """How the server is reached, for the doctor and the logs (no header or environment values)."""
    transport = config.transport
    if isinstance(transport, Http):
        return transport.url
    return " ".join((transport.command, *transport.args))


class ServerConnection:
    """One MCP server: started or reached, its tools listed, called with a timeout, closed."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self._live: _Live | None = None
        self._listed: tuple[Tool, ...] = ()  # kept while the connection is down: a call starts it again
        self._opening = asyncio.Lock()

    @property
    def name(self) -> str:
        """The server's name in the configuration."""
        return self.config.name

    @property
    def tools(self) -> tuple[Tool, ...]:
        """The tools the server listed when it was reached last (none before it was ever reached)."""
        return self._listed

    async def for_scope(self, scope: Scope) -> ServerConnection:
        """The connection a person's call goes through: this one, shared by everyone."""
        return self

    async def open(self) -> None:
        """Start or reach the server and list its tools (within START_SECONDS, or the longer timeout); ToolServerError
        when it cannot."""
        async with self._opening:
            if self._live is not None:
                return
            ready: asyncio.Future[tuple[Client, tuple[Tool, ...]]] = asyncio.get_running_loop().create_future()
            stop = asyncio.Event()
            task = asyncio.create_task(self._hold(ready, stop), name=f"mcp server {self.name}")
            try:
                async with asyncio.timeout(max(self.config.timeout, START_SECONDS)):
                    client, tools = await asyncio.shield(ready)
            except BaseException as exc:
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
                if isinstance(exc, asyncio.CancelledError):
                    raise
                raise ToolServerError(f"MCP server {self.name} ({where(self.config)}): {reason(exc)}") from exc
            self._live, self._listed = _Live(client, stop, task), tools

    async def call(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        """Call a tool within the timeout; a closed connection is opened again once first."""
        if self._live is None:
            await self.open()
        live = self._live
        assert live is not None  # open() succeeded
        timeout = self.config.timeout
        try:
            async with asyncio.timeout(timeout + 1):  # the SDK's own timeout first; this one if it hangs elsewhere
                return await live.client.call_tool(tool, arguments, read_timeout_seconds=timeout)
        except TimeoutError as exc:
            raise ToolServerError(f"{tool} gave no answer within {timeout:g} s", why="timeout") from exc
        except MCPError as exc:
            if exc.error.code == REQUEST_TIMEOUT:
                raise ToolServerError(f"{tool} gave no answer within {timeout:g} s", why="timeout") from exc
            if exc.error.code == CONNECTION_CLOSED:
                log.warning("MCP server %s closed its connection; it is started again at the next call", self.name)
                await self.close()
                raise ToolServerError(f"{tool} failed: {reason(exc)}") from exc
            raise ToolServerError(f"{tool} failed: {reason(exc)}", why="error") from exc
        except ValidationError as exc:  # the server's answer is not what the protocol says
            raise ToolServerError(f"{tool} failed: {reason(exc)}", why="error") from exc
        except (OSError, httpx2.HTTPError) as exc:
            raise ToolServerError(f"{tool} failed: {reason(exc)}") from exc

    async def close(self) -> None:
        """End the connection (a started server is stopped); a closed one stays closed."""
        live, self._live = self._live, None
        if live is None:
            return
        live.stop.set()
        try:
            async with asyncio.timeout(self.config.timeout):
                await live.task
        except TimeoutError:
            live.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await live.task

    async def _hold(self, ready: asyncio.Future[tuple[Client, tuple[Tool, ...]]], stop: asyncio.Event) -> None:
        """The connection's own task: open the client, list the tools, wait for the stop, close the client."""
        try:
            async with contextlib.AsyncExitStack() as stack:
                client = await stack.enter_async_context(Client(await self._transport(stack), client_info=CLIENT,
                                                                read_timeout_seconds=self.config.timeout))
                tools = await _listed(client)
                if not ready.done():
                    ready.set_result((client, tools))
                await stop.wait()
        except Exception as exc:  # handed to open(), or logged: the connection's task ends quietly
            if not ready.done():
                ready.set_exception(exc)
            else:
                log.warning("MCP server %s: the connection ended: %s", self.name, reason(exc))

    async def _transport(self, stack: contextlib.AsyncExitStack) -> Transport | StdioServerParameters:
        """The SDK transport: the command started over stdio, or the URL with the configured headers."""
        transport = self.config.transport
        if isinstance(transport, Http):
            http = await stack.enter_async_context(httpx2.AsyncClient(
                headers=dict(transport.headers),
                timeout=httpx2.Timeout(self.config.timeout, read=STREAM_READ_SECONDS)))
            return streamable_http_client(transport.url, http_client=http)
        return StdioServerParameters(command=transport.command, args=list(transport.args), env=dict(transport.env),
                                     cwd=transport.cwd)


async def _listed(client: Client) -> tuple[Tool, ...]:
    """Every tool the server lists, page by page."""
    tools: list[Tool] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            break
    return tuple(tools)
