"""MNEMO_MCP_SERVERS: inline JSON or a .json/.toml file into frozen records; every mistake one clear ConfigError."""
from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from mcp.types import ToolAnnotations

from bot.errors import ConfigError
from bot.mcp.config import ALL, DEFAULT_TIMEOUT, Http, ServerConfig, Stdio, read_servers
from bot.mcp.toolbox import changes_something, tool_name
from bot.settings import Settings

TOML = """
[weather]
command = "python3"
args = ["weather.py", "--units", "metric"]
env = { WEATHER_TOKEN = "s3cret-token", UNITS = "metric" }
cwd = "/srv/weather"
tools = ["forecast", "set_alarm"]
confirm = ["set_alarm"]
timeout = 10

[calendar]
url = "https://calendar.example.org/mcp"
headers = { Authorization = "Bearer cal-token-123" }
tools = "*"
"""


def test_a_toml_file_names_stdio_and_http_servers(tmp_path: Path) -> None:
    path = tmp_path / "mcp.toml"
    path.write_text(TOML, encoding="utf-8")
    weather, calendar = read_servers(f"  {path}  ")
    assert weather == ServerConfig("weather", Stdio("python3", ("weather.py", "--units", "metric"),
                                                    {"WEATHER_TOKEN": "s3cret-token", "UNITS": "metric"},
                                                    "/srv/weather"),
                                   frozenset({"forecast", "set_alarm"}), frozenset({"set_alarm"}), 10.0)
    assert calendar == ServerConfig("calendar", Http("https://calendar.example.org/mcp",
                                                     {"Authorization": "Bearer cal-token-123"}),
                                    frozenset({ALL}), frozenset(), DEFAULT_TIMEOUT)
    assert weather.allows("forecast") and not weather.allows("erase_all") and calendar.allows("anything")
    assert weather.asks_first("set_alarm") and not weather.asks_first("forecast")
    with pytest.raises(dataclasses.FrozenInstanceError):
        weather.timeout = 99  # type: ignore[misc]
    with pytest.raises(TypeError):
        weather.transport.env["UNITS"] = "imperial"  # type: ignore[index, union-attr]


def test_inline_json_and_a_json_file_read_the_same(tmp_path: Path) -> None:
    data = {"weather": {"command": "python3", "args": ["w.py"], "tools": ["forecast"], "confirm": "*"}}
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert read_servers(json.dumps(data)) == read_servers(str(path))
    (server,) = read_servers(str(path))
    assert server.asks_first("forecast")  # confirm "*": every tool asks first
    assert read_servers("") == () and read_servers("   ") == ()


def test_only_secret_values_are_masked_in_the_logs(tmp_path: Path) -> None:
    path = tmp_path / "mcp.toml"
    path.write_text(TOML, encoding="utf-8")
    settings = Settings(_env_file=None, data_dir=tmp_path, mcp_servers=str(path))  # type: ignore[call-arg]
    assert {"s3cret-token", "Bearer cal-token-123"} <= set(settings.secrets())
    assert "metric" not in settings.secrets()
    broken = Settings(_env_file=None, data_dir=tmp_path, mcp_servers="{")  # type: ignore[call-arg]
    assert broken.secrets() == []  # the start refuses the configuration itself


def test_a_server_is_shared_unless_it_is_per_person() -> None:
    shared, personal = read_servers('{"a": {"command": "x", "tools": "*"}, '
                                    '"b": {"command": "x", "tools": "*", "per_person": true}}')
    assert (shared.per_person, personal.per_person) == (False, True)


@pytest.mark.parametrize(("value", "says"), [
    ("{not json", "MNEMO_MCP_SERVERS is no valid JSON"),
    ("servers.yaml", "inline JSON (starting with '{') or a .json or .toml file"),
    ("/nonexistent/mcp.toml", "cannot read /nonexistent/mcp.toml"),
    ('["weather"]', "the top level must map server names"),
    ('{"we ather": {"command": "x", "tools": "*"}}', "the server name 'we ather'"),
    ('{"weather": "python3"}', "server 'weather' must be a table"),
    ('{"weather": {"command": "x"}}', "needs `tools`"),
    ('{"weather": {"command": "x", "tools": []}}', "needs `tools`"),
    ('{"weather": {"command": "x", "tools": "forecast"}}', 'tools must be a list of tool names or "*"'),
    ('{"weather": {"command": "x", "tools": ["forecast", 3]}}', 'tools must be a list of tool names or "*"'),
    ('{"weather": {"command": "x", "tool": ["forecast"]}}', "unknown key 'tool'"),
    ('{"weather": {"tools": "*"}}', "either `command` (stdio) or `url`"),
    ('{"weather": {"command": "x", "url": "http://127.0.0.1:1/mcp", "tools": "*"}}', "either `command`"),
    ('{"weather": {"command": "", "tools": "*"}}', "command must be the program"),
    ('{"weather": {"command": "x", "args": "a b", "tools": "*"}}', "args must be a list of strings"),
    ('{"weather": {"command": "x", "env": {"A": 1}, "tools": "*"}}', "env must map names to strings"),
    ('{"weather": {"command": "x", "headers": {}, "tools": "*"}}', "'headers' is for a server at a `url`"),
    ('{"weather": {"url": "ftp://example.org/mcp", "tools": "*"}}', "url must be an http(s) address"),
    ('{"weather": {"url": "http:///mcp", "tools": "*"}}', "url must be an http(s) address"),
    ('{"weather": {"url": "http://127.0.0.1:1/mcp", "cwd": "/", "tools": "*"}}', "'cwd' is for a server started"),
    ('{"weather": {"command": "x", "tools": ["forecast"], "confirm": ["set_alarm"]}}',
     "confirm names 'set_alarm', which `tools` does not allow"),
    ('{"weather": {"command": "x", "tools": "*", "timeout": 0}}', "timeout must be a number of seconds"),
    ('{"weather": {"command": "x", "tools": "*", "timeout": 601}}', "timeout must be a number of seconds"),
    ('{"weather": {"command": "x", "tools": "*", "timeout": true}}', "timeout must be a number of seconds"),
    ('{"weather": {"command": "x", "tools": "*", "timeout": "30"}}', "timeout must be a number of seconds"),
    ('{"weather": {"command": "x", "tools": "*", "per_person": "yes"}}', "per_person must be true or false"),
    ('{"weather": {"url": "http://127.0.0.1:1/mcp", "tools": "*", "per_person": true}}',
     "per_person is for a server started with `command`"),
    ('{"weather": {"command": "x", "cwd": "/srv", "tools": "*", "per_person": true}}',
     "a per_person server works in its person's own folder"),
])
def test_a_wrong_configuration_is_one_clear_sentence(value: str, says: str) -> None:
    with pytest.raises(ConfigError) as caught:
        read_servers(value)
    assert says in str(caught.value)


def test_a_broken_toml_file_says_where(tmp_path: Path) -> None:
    path = tmp_path / "mcp.toml"
    path.write_text("[weather\ncommand = 1", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"mcp.toml is no valid TOML"):
        read_servers(str(path))


def test_which_tools_change_something_and_how_the_model_calls_them() -> None:
    (server,) = read_servers('{"weather": {"command": "x", "tools": "*", "confirm": ["send"]}}')
    assert changes_something(server, "send", ToolAnnotations(read_only_hint=True))  # the operator's word wins
    assert changes_something(server, "set", ToolAnnotations(read_only_hint=False))
    assert changes_something(server, "wipe", ToolAnnotations(destructive_hint=True))
    assert not changes_something(server, "look", ToolAnnotations(read_only_hint=True, destructive_hint=True))
    # Issue 38, the MCP defaults (readOnlyHint false, destructiveHint true): a tool without a read-only hint may
    # change things and asks first (before, it ran without asking).
    assert changes_something(server, "look", ToolAnnotations(title="Look"))  # no hint either way
    assert changes_something(server, "look", None)


def test_the_operator_declares_a_tool_or_a_whole_server_read_only() -> None:
    (server,) = read_servers('{"w": {"command": "x", "tools": "*", "read_only": ["look"]}}')
    assert not changes_something(server, "look", None) and changes_something(server, "post", None)
    assert changes_something(server, "look", ToolAnnotations(read_only_hint=False))  # the server says it changes
    (whole,) = read_servers('{"w": {"command": "x", "tools": ["a", "b"], "read_only": "*"}}')
    assert not changes_something(whole, "a", None) and not changes_something(whole, "b", ToolAnnotations())
    with pytest.raises(ConfigError, match="'a' cannot both ask first"):
        read_servers('{"w": {"command": "x", "tools": "*", "confirm": ["a"], "read_only": ["a"]}}')
    with pytest.raises(ConfigError, match="read_only names 'c', which `tools` does not allow"):
        read_servers('{"w": {"command": "x", "tools": ["a"], "read_only": ["c"]}}')
    assert tool_name("weather", "forecast") == "weather__forecast"
    assert tool_name("files", "read.file/v2") == "files__read_file_v2"
    assert len(tool_name("a" * 32, "b" * 60)) == 64


def test_the_examples_in_the_operator_guide_and_the_env_example_read(tmp_path: Path) -> None:
    root = Path(__file__).parent.parent
    guide = (root / "docs" / "operator-guide.md").read_text(encoding="utf-8")
    section = guide.split("### MCP servers", 1)[1].split("\n## ", 1)[0]
    found = re.search(r"```toml\n(.*?)```", section, re.S)
    assert found is not None
    path = tmp_path / "mcp.toml"
    path.write_text(found.group(1), encoding="utf-8")
    weather, remote = read_servers(str(path))
    assert (weather.name, weather.asks_first("set_alarm"), remote.name, remote.transport) == (
        "weather", True, "weather-remote", Http("http://127.0.0.1:8765/mcp", {"Authorization": "Bearer …"}))
    inline = re.search(r"^MNEMO_MCP_SERVERS='(.*)'$", section, re.M)
    without_env = dataclasses.replace(weather.transport, env={})  # type: ignore[type-var]
    assert inline is not None
    assert read_servers(inline.group(1)) == (dataclasses.replace(weather, transport=without_env, timeout=30.0),)
    env_lines = [line.split("=", 1)[1] for line in (root / ".env.example").read_text(encoding="utf-8").splitlines()
                 if line.startswith("#MNEMO_MCP_SERVERS={")]
    assert [server.name for line in env_lines for server in read_servers(line)] == ["weather"]
