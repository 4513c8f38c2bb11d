"""MCP servers: their tools offered to the chat model (config, connections, the toolbox)."""
