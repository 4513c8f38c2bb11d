"""MNEMO_MCP_SERVERS read into frozen records: inline JSON, or the path of a .json or .toml file (pure but the read).

The top level names the servers; each is reached over stdio (`command`, `args`, `env`, `cwd`) or streamable
HTTP (`url`, `headers`), offers the tools its `tools` list allows ("*": all it lists), asks the person first
before those in `confirm` ("*": all), runs those the operator vouches for in `read_only` ("*": all) without
asking, and gets `timeout` seconds for each call. A tool in neither list asks first unless its server annotates
it as read-only (the MCP defaults: a tool may change things). A server is one process for everyone (what it keeps is
shared, and out of /deleteme's reach) unless `per_person` is true: then a stdio server is started per person, in a
working directory of that person's (bot/mcp/personal.py). Anything else is a ConfigError that says where and what.
"""
from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any
from urllib.parse import urlsplit

from bot.errors import ConfigError

SETTING = "MNEMO_MCP_SERVERS"
ALL = "*"
DEFAULT_TIMEOUT = 30.0
MAX_TIMEOUT = 600.0
KEYS = frozenset({"command", "args", "env", "cwd", "url", "headers", "tools", "confirm", "read_only", "timeout",
                  "per_person"})
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,31}")
_SECRET_NAME = re.compile(r"TOKEN|KEY|SECRET|PASS|AUTH|CREDENTIAL", re.IGNORECASE)


@dataclass(frozen=True)
class Stdio:
    """A server mnemo starts itself and talks to over its standard input and output."""

    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))  # added to the SDK's safe defaults
    cwd: str | None = None


@dataclass(frozen=True)
class Http:
    """A server that is already running, reached over streamable HTTP."""

    url: str
    headers: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True)
class ServerConfig:
    """One MCP server: how to reach it, which of its tools the model may use, which ask the person first."""

    name: str
    transport: Stdio | Http
    tools: frozenset[str]  # the tools offered; "*": every tool the server lists
    confirm: frozenset[str] = frozenset()  # the tools that change something; "*": all of them
    timeout: float = DEFAULT_TIMEOUT  # seconds for each call (the start may take longer: servers.START_SECONDS)
    read_only: frozenset[str] = frozenset()  # the tools the operator vouches change nothing; "*": all of them
    per_person: bool = False  # one process per person, in their own working directory (else one for everyone)

    def allows(self, tool: str) -> bool:
        """Whether the operator lets the model use this tool."""
        return ALL in self.tools or tool in self.tools

    def asks_first(self, tool: str) -> bool:
        """Whether the operator marked this tool as one that changes something."""
        return ALL in self.confirm or tool in self.confirm

    def vouches_read_only(self, tool: str) -> bool:
        """Whether the operator declared this tool (or the whole server) as one that changes nothing."""
        return ALL in self.read_only or tool in self.read_only

    @property
    def secrets(self) -> list[str]:
        """The values that may hold tokens, for logs to mask: every header, and environment values named so."""
        if isinstance(self.transport, Http):
            return [v for v in self.transport.headers.values() if v]
        return [v for k, v in self.transport.env.items() if v and _SECRET_NAME.search(k)]


def read_servers(value: str) -> tuple[ServerConfig, ...]:
    """The servers MNEMO_MCP_SERVERS names (none when it is empty); ConfigError for anything wrong in it."""
    text = value.strip()
    if not text:
        return ()
    if text.startswith(("{", "[")):
        return parse_servers(_json(text, SETTING), SETTING)
    path = Path(text).expanduser()
    if path.suffix not in (".json", ".toml"):
        raise ConfigError(f"{SETTING} must be inline JSON (starting with '{{') or a .json or .toml file, not {text!r}.")
    try:
        raw = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{SETTING}: cannot read {path}: {exc.strerror or exc}.") from exc
    if path.suffix == ".json":
        return parse_servers(_json(raw, str(path)), str(path))
    try:
        return parse_servers(tomllib.loads(raw), str(path))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is no valid TOML: {exc}.") from exc


def parse_servers(data: object, where: str) -> tuple[ServerConfig, ...]:
    """The servers in parsed JSON or TOML: a table of server names."""
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: the top level must map server names to their settings.")
    return tuple(_server(str(name), raw, where) for name, raw in data.items())


def _json(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{where} is no valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno}).") from exc


def _server(name: str, raw: object, where: str) -> ServerConfig:
    if not _NAME.fullmatch(name):
        raise ConfigError(f"{where}: the server name {name!r} must be 1 to 32 letters, digits, _ or - .")
    at = f"{where}: server {name!r}"
    if not isinstance(raw, dict):
        raise ConfigError(f"{at} must be a table of settings.")
    unknown = sorted(set(raw) - KEYS)
    if unknown:
        raise ConfigError(f"{at} has the unknown key {unknown[0]!r} (use {', '.join(sorted(KEYS))}).")
    tools = _names(raw.get("tools"), f"{at}: tools")
    if not tools:
        raise ConfigError(f'{at} needs `tools`: a list of the tools the model may use, or "*" for all.')
    confirm = _names(raw.get("confirm", []), f"{at}: confirm")
    read_only = _names(raw.get("read_only", []), f"{at}: read_only")
    for key, names in (("confirm", confirm), ("read_only", read_only)):
        if ALL not in tools and (stray := sorted(names - tools - {ALL})):
            raise ConfigError(f"{at}: {key} names {stray[0]!r}, which `tools` does not allow.")
    clash = sorted(confirm & read_only) or ([ALL] if confirm and read_only and ALL in confirm | read_only else [])
    if clash:
        raise ConfigError(f"{at}: {clash[0]!r} cannot both ask first (confirm) and be read-only (read_only).")
    return ServerConfig(name, _transport(raw, at), tools, confirm, _timeout(raw.get("timeout", DEFAULT_TIMEOUT), at),
                        read_only, _per_person(raw, at))


def _per_person(raw: dict[str, Any], at: str) -> bool:
    value = raw.get("per_person", False)
    if not isinstance(value, bool):
        raise ConfigError(f"{at}: per_person must be true or false.")
    if value and "url" in raw:
        raise ConfigError(f"{at}: per_person is for a server started with `command`; one at a `url` runs already, "
                          "for everyone.")
    if value and "cwd" in raw:
        raise ConfigError(f"{at}: a per_person server works in its person's own folder under the data directory; "
                          "leave out cwd.")
    return value


def _transport(raw: dict[str, Any], at: str) -> Stdio | Http:
    if ("command" in raw) == ("url" in raw):
        raise ConfigError(f"{at} needs either `command` (stdio) or `url` (streamable HTTP).")
    if "url" in raw:
        if stray := sorted({"args", "env", "cwd"} & set(raw)):
            raise ConfigError(f"{at}: {stray[0]!r} is for a server started with `command`, not one at a `url`.")
        url = raw["url"]
        parts = urlsplit(url) if isinstance(url, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(f"{at}: url must be an http(s) address, not {url!r}.")
        return Http(url, _table(raw.get("headers", {}), f"{at}: headers"))
    if "headers" in raw:
        raise ConfigError(f"{at}: 'headers' is for a server at a `url`, not one started with `command`.")
    command = raw["command"]
    if not isinstance(command, str) or not command.strip():
        raise ConfigError(f"{at}: command must be the program to start.")
    args = raw.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ConfigError(f"{at}: args must be a list of strings.")
    cwd = raw.get("cwd")
    if cwd is not None and (not isinstance(cwd, str) or not cwd):
        raise ConfigError(f"{at}: cwd must be a folder.")
    return Stdio(command, tuple(args), _table(raw.get("env", {}), f"{at}: env"), cwd)


def _names(value: object, at: str) -> frozenset[str]:
    if value == ALL:
        return frozenset({ALL})
    if value is None:
        return frozenset()
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ConfigError(f'{at} must be a list of tool names or "*".')
    return frozenset(v.strip() for v in value)


def _table(value: object, at: str) -> Mapping[str, str]:
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise ConfigError(f"{at} must map names to strings.")
    return MappingProxyType(dict(value))


def _timeout(value: object, at: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= MAX_TIMEOUT:
        raise ConfigError(f"{at}: timeout must be a number of seconds above 0 and at most {MAX_TIMEOUT:g}.")
    return float(value)
