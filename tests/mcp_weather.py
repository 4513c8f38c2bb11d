"""A real MCP server for the tests, written with the official SDK: run over stdio or streamable HTTP on 127.0.0.1.

    python tests/mcp_weather.py stdio ALARMS_FILE
    python tests/mcp_weather.py http ALARMS_FILE PORT

Its tools: `forecast` changes nothing (annotated read-only); `set_alarm` changes something (annotated so): it
appends a line to ALARMS_FILE, so a test can see whether it really ran; `wait` sleeps (a hanging tool);
`broken` raises (an error result); `pid` names the process (to stop it); `erase_all` is never on an allowlist.
"""
from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

READ_ONLY = ToolAnnotations(read_only_hint=True)
CHANGES = ToolAnnotations(read_only_hint=False, destructive_hint=False)


def weather_server(alarms: Path) -> MCPServer:
    """The server, writing the alarms it sets to `alarms`."""
    server = MCPServer("weather", log_level="WARNING")

    @server.tool(annotations=READ_ONLY)
    def forecast(place: str) -> str:
        """Tomorrow's weather for a place."""
        return f"Morgen in {place}: sonnig, 21 °C."

    @server.tool(title="Wecker stellen", annotations=CHANGES)
    def set_alarm(time: str, label: str = "") -> str:
        """Set an alarm clock at HH:MM."""
        with alarms.open("a", encoding="utf-8") as out:
            out.write(f"{time} {label}\n")
        return f"Wecker für {time} gestellt."

    @server.tool(annotations=READ_ONLY)
    async def wait(seconds: float) -> str:
        """Wait a while, then answer."""
        await asyncio.sleep(seconds)
        return "fertig"

    @server.tool(annotations=READ_ONLY)
    def broken() -> str:
        """Always fails."""
        raise ToolError("the sensor is offline")

    @server.tool(annotations=READ_ONLY)
    def pid() -> str:
        """The server's process id (for a test that stops it)."""
        return str(os.getpid())

    @server.tool()
    def post_card(to: str) -> str:
        """Send a postcard (no annotations: by the MCP defaults it may change things)."""
        with alarms.open("a", encoding="utf-8") as out:
            out.write(f"card to {to}\n")
        return f"Karte an {to} verschickt."

    @server.tool()
    def erase_all() -> str:
        """Erase everything (never allowed)."""
        alarms.write_text("erased\n", encoding="utf-8")
        return "erased"

    return server


def main(argv: list[str]) -> None:
    """Serve over the transport the first argument names."""
    transport, alarms = argv[0], Path(argv[1])
    server = weather_server(alarms)
    if transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=int(argv[2]))


if __name__ == "__main__":
    main(sys.argv[1:])
