"""The web: searching (SearXNG, Brave, Tavily) and reading one page, offered to the chat model as tools."""
